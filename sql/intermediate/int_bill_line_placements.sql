-- Every bill line of $day that is not a GPU node-hour, with the day's share of its cost and where the
-- ledger places it (docs/ledger.md#lines-that-are-not-node-hours): `placement` is the ledger category
-- of the first rule of intermediate.ref_line_placements the line meets (models/ledger_categories.py
-- LINE_RULES), and `allocation` how that category's lines are allocated (marts.dim_ledger_categories,
-- a credit's by its tag when it has one); `direct_team`, `direct_project` say who gets it when it goes
-- to one place (`is_direct`); the rest are split by weight in int_cost_allocations. The FOCUS export
-- reads the same rows, so a line is placed one way only.
SELECT $day::DATE AS day, * EXCLUDE (is_unplaced),
       CASE WHEN is_unplaced THEN '_unallocated'
            WHEN allocation = 'commitment_owner'
            THEN coalesce(CASE WHEN commitment_teams = 1 THEN commitment_team END, tag_team, '_unallocated')
            ELSE coalesce(config_lookup($project_teams, tag_project), tag_team, tag_project)
       END AS direct_team,
       CASE WHEN is_unplaced OR allocation = 'commitment_owner' THEN '_unallocated' ELSE tag_project END
           AS direct_project,
       is_unplaced OR allocation IN ('tag', 'commitment_owner') AS is_direct
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
    ),
    tagged AS (
        SELECT l.*, tag_value(l.tags, $project_keys) AS tag_project, tag_value(l.tags, $team_keys) AS tag_team
        FROM lines l
    ),
    -- the category of the first rule each line meets (the last rule meets every line)
    first_rules AS (
        SELECT t.line_key, arg_min(r.category, r.ord) AS placement
        FROM tagged t
        JOIN intermediate.ref_line_placements r
          ON (r.quarantined IS NULL OR r.quarantined = coalesce(t.quarantined, FALSE))
         AND (r.commitment_status IS NULL OR r.commitment_status = t.commitment_discount_status)
         AND (r.charge_category IS NULL OR r.charge_category = t.charge_category)
         AND (r.project_tagged IS NULL OR r.project_tagged = (t.tag_project IS NOT NULL))
         AND (r.service_category IS NULL OR r.service_category = t.service_category)
         -- a node tag, or an instance by its ResourceType
         AND (r.node_like IS NULL OR r.node_like = (tag_value(t.tags, $node_keys) IS NOT NULL
                                                    OR lower(coalesce(t.resource_type, '')) LIKE '%instance%'))
        GROUP BY t.line_key
    ),
    placed AS (SELECT * FROM tagged JOIN first_rules USING (line_key))
    SELECT p.*, co.team AS commitment_team, coalesce(co.teams, 0) AS commitment_teams,
           CASE WHEN c.allocation = 'tag_else_pretax_cost'
                THEN CASE WHEN p.tag_project IS NOT NULL THEN 'tag' ELSE 'pretax_cost' END
                ELSE c.allocation END AS allocation,
           c.is_unplaced   -- what could not be placed goes whole to _unallocated
    FROM placed p
    JOIN marts.dim_ledger_categories c ON c.name = p.placement
    LEFT JOIN commitment_owners co USING (commitment_discount_id)
)
