-- The optional node inventory (inventory/nodes.csv).
CREATE TABLE IF NOT EXISTS staging.stg_inventory__nodes (
    _file       VARCHAR NOT NULL,
    _row        BIGINT NOT NULL,
    hostname    VARCHAR NOT NULL,
    cluster     VARCHAR,
    resource_id VARCHAR,
    gpu_model   VARCHAR,
    gpu_count   INTEGER,
    pool        VARCHAR,
    team        VARCHAR
);
