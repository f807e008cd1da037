-- A GPU model the catalog does not know: the node's cost is attributed as usual, but no MFU can be
-- computed for runs on it. Said once per day and node in ops.quarantine, against the row it came from.
DELETE FROM ops.quarantine WHERE day = $day AND origin = 'intermediate/int_nodes';
INSERT INTO ops.quarantine (source, file, row_ref, reason, payload, day, origin)
-- against the landing file the node is known from: its inventory row, else a bill line tagged with it,
-- else its telemetry; the source is that file's
SELECT coalesce(src.source, 'landing'), coalesce(inv._file, bil._file, tel._file, '(bill tags)'),
       coalesce('row ' || inv._row, 'host ' || n.hostname),
       -- never NULL (ops.quarantine.reason is NOT NULL: a NULL would fail the day), even without a hostname
       'GPU model ''' || n.gpu_model || ''' of node ' || coalesce(n.hostname, '(no hostname)')
           || ' is not in the GPU catalog (models/gpu_catalog.py): its cost is attributed, but MFU on it stays NULL',
       json_object('hostname', n.hostname, 'gpu_model', n.gpu_model), $day::DATE, 'intermediate/int_nodes'
FROM intermediate.int_nodes n
LEFT JOIN (SELECT hostname, min(_file) AS _file, min(_row) AS _row FROM staging.stg_inventory__nodes GROUP BY 1) inv
       ON n.known_from = 'inventory' AND inv.hostname = n.hostname
LEFT JOIN (SELECT tag_value(tags, $node_keys) AS hostname, min(regexp_extract(line_key, '^(.*)#[^#]*$', 1)) AS _file
           FROM intermediate.int_bill_line_hours WHERE day = $day AND NOT quarantined GROUP BY 1) bil
       ON n.known_from = 'bill_tags' AND bil.hostname = n.hostname
LEFT JOIN (SELECT hostname, min(_file) AS _file FROM staging.stg_dcgm__gpu_minutes WHERE day = $day GROUP BY 1) tel
       ON tel.hostname = n.hostname
LEFT JOIN (SELECT file, min(source) AS source FROM ops.landed_files GROUP BY file) src
       ON src.file = coalesce(inv._file, bil._file, tel._file)
WHERE n.day = $day AND n.gpu_model IS NOT NULL AND gpu_model_canonical(n.gpu_model) IS NULL;
;
-- A host only telemetry knows (no inventory row, no bill line tagged with it) and that no config entry
-- names by hostname: perhaps a stray line, perhaps another spelling of a billed node's name
-- (`node-001.ec2.internal` for `node-001`, or its case). It is never priced by a rate card, contract or
-- owned entry (int_config_cost_lines), so it cannot be costed twice; said here once per day and host.
INSERT INTO ops.quarantine (source, file, row_ref, reason, payload, day, origin)
SELECT coalesce(src.source, 'landing'), coalesce(tel._file, '(telemetry)'), 'host ' || n.hostname,
       'host ' || n.hostname || ' sends telemetry but is in no inventory, bill line or config hostname: it is '
           || 'not priced by any rate card, contract or owned entry'
           || coalesce(' (it looks like known node ' || twin.hostname || ': add that spelling to the inventory, '
                       || 'or fix the exporter''s hostname)', ''),
       json_object('hostname', n.hostname, 'looks_like', twin.hostname), $day::DATE, 'intermediate/int_nodes'
FROM intermediate.int_nodes n
LEFT JOIN (SELECT hostname, min(_file) AS _file FROM staging.stg_dcgm__gpu_minutes WHERE day = $day GROUP BY 1) tel
       ON tel.hostname = n.hostname
LEFT JOIN (SELECT file, min(source) AS source FROM ops.landed_files GROUP BY file) src ON src.file = tel._file
LEFT JOIN (SELECT lower(split_part(hostname, '.', 1)) AS short, min(hostname) AS hostname
           FROM intermediate.int_nodes WHERE day = $day AND known_from <> 'telemetry' GROUP BY 1) twin
       ON twin.short = lower(split_part(n.hostname, '.', 1))
WHERE n.day = $day AND n.known_from = 'telemetry'
  AND NOT EXISTS (SELECT 1 FROM (SELECT unnest(from_json($cost_entries, '[{"hostname": "VARCHAR"}]'), recursive := true)) e
                  WHERE e.hostname = n.hostname)
