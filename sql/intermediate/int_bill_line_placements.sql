-- Every bill line of $day that is not a GPU node-hour, with the day's share of its cost and where the
-- ledger places it (docs/ledger.md#lines-that-are-not-node-hours): `placement` is the ledger category
-- (storage, network, compute_other, other for project-tagged lines; shared; tax; credit;
-- unused_commitment; unattributed), and `direct_team`, `direct_project` say who gets it when it goes
-- to one place (`is_direct`); shared lines, tax and untagged credits are split by weight in
-- int_cost_allocations. The FOCUS export reads the same rows,
-- so a line is placed one way only.
SELECT $day::DATE AS day, *,
       CASE placement
         WHEN 'unused_commitment' THEN coalesce(CASE WHEN commitment_teams = 1 THEN commitment_team END, tag_team,
                                                '_unallocated')
         WHEN 'unattributed' THEN '_unallocated'
         ELSE coalesce(config_lookup($project_teams, tag_project), tag_team, tag_project)
       END AS direct_team,
       CASE WHEN placement IN ('unused_commitment', 'unattributed') THEN '_unallocated' ELSE tag_project END
           AS direct_project,
       placement IN ('unused_commitment', 'unattributed', 'storage', 'network', 'compute_other', 'other')
           OR (placement = 'credit' AND tag_project IS NOT NULL) AS is_direct
FROM (
    WITH node_line_keys AS (
        SELECT DISTINCT unnest(line_keys) AS line_key FROM intermediate.int_node_hours WHERE day = $day
    ),
    commitment_owners AS (
        -- a commitment belongs to the team owning the pool whose nodes it covered
        SELECT l.commitment_discount_id, min(nh.pool_team) AS team, count(DISTINCT nh.pool_team) AS teams
        FROM intermediate.int_bill_line_hours l
        JOIN (SELECT hostname, hour_ts, pool_team, unnest(line_keys) AS line_key
              FROM intermediate.int_node_hours WHERE day = $day) nh USING (line_key)
        WHERE l.day = $day AND l.commitment_discount_id IS NOT NULL AND nh.pool_team IS NOT NULL
        GROUP BY 1
    ),
    lines AS (
        SELECT line_key, any_value(quarantined) AS quarantined, any_value(billing_currency) AS billing_currency,
               any_value(charge_category) AS charge_category,
               any_value(service_category) AS service_category, any_value(resource_id) AS resource_id,
               any_value(resource_type) AS resource_type, any_value(commitment_discount_id) AS commitment_discount_id,
               any_value(commitment_discount_status) AS commitment_discount_status, any_value(tags) AS tags,
               sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost
        FROM intermediate.int_bill_line_hours
        WHERE day = $day AND line_key NOT IN (SELECT line_key FROM node_line_keys)
        GROUP BY line_key
    )
    SELECT l.*, tag_value(l.tags, $project_keys) AS tag_project, tag_value(l.tags, $team_keys) AS tag_team,
           co.team AS commitment_team, coalesce(co.teams, 0) AS commitment_teams,
           CASE
             WHEN l.quarantined THEN 'unattributed'
             WHEN l.commitment_discount_status = 'Unused' THEN 'unused_commitment'
             WHEN l.charge_category = 'Tax' THEN 'tax'
             WHEN l.charge_category = 'Credit' THEN 'credit'
             WHEN tag_value(l.tags, $project_keys) IS NOT NULL THEN
                  CASE l.service_category WHEN 'Storage' THEN 'storage' WHEN 'Networking' THEN 'network'
                                          WHEN 'Compute' THEN 'compute_other' ELSE 'other' END
             -- an instance of no known node, without a project: nobody to charge
             WHEN tag_value(l.tags, $node_keys) IS NOT NULL OR lower(coalesce(l.resource_type, '')) LIKE '%instance%'
                  THEN 'unattributed'
             ELSE 'shared'
           END AS placement
    FROM lines l
    LEFT JOIN commitment_owners co USING (commitment_discount_id)
)
