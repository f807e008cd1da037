-- FOCUS export, the step before the others: how the export spells values that FOCUS constrains but bills
-- spell their own way (docs/focus-export.md#values-focus-constrains). TEMP macros and a TEMP table only:
-- the export's connection is read-only. Each is a pure function of the origin's value, so every row of an
-- origin still carries the same dimensions (split cost allocation asks them to match the origin's).

-- Text as printable ASCII. FOCUS StringHandling asks for valid Unicode; the FinOps focus-validator (1.2
-- rules) checks "MUST contain only ASCII characters" on ChargeDescription and the other String columns.
-- Accents are stripped (Café -> Cafe), currency signs become their ISO 4217 code (€40 -> EUR 40),
-- typographic marks their ASCII look-alikes, control characters (a newline in a description) a space;
-- anything left is `?`. The staged bill line keeps the bill's own text. Text that is printable ASCII
-- already (nearly all) takes one match.
CREATE OR REPLACE TEMP MACRO focus_ascii(s) AS CASE WHEN regexp_full_match(s, '[\x20-\x7E]*') THEN s ELSE
    regexp_replace(regexp_replace(
        replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
            replace(replace(replace(replace(
                regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(strip_accents(s),
                    '€\s*([0-9])', 'EUR \1', 'g'), '£\s*([0-9])', 'GBP \1', 'g'), '₹\s*([0-9])', 'INR \1', 'g'),
                    '₩\s*([0-9])', 'KRW \1', 'g'), '¥\s*([0-9])', 'JPY \1', 'g'),
            '€', 'EUR'), '£', 'GBP'), '₹', 'INR'), '₩', 'KRW'), '¥', 'JPY'),
            '×', 'x'), '–', '-'), '—', '-'), '…', '...'), 'µ', 'u'), '·', '.'),
            '’', ''''), '‘', ''''), '“', '"'), '”', '"'),
        '[\x00-\x1F\x7F]', ' ', 'g'),
    '[^\x20-\x7E]', '?', 'g') END;

-- FOCUS UnitFormat's time units, from a bill's spelling of one (Hrs, hour, Mo, months, Secs…), singular or
-- plural as asked; NULL for a word that is not one.
CREATE OR REPLACE TEMP MACRO focus_time_unit(word, plural) AS
    MAP {'yr': 'Year', 'yrs': 'Year', 'year': 'Year', 'years': 'Year',
         'mo': 'Month', 'mos': 'Month', 'mon': 'Month', 'mth': 'Month', 'mths': 'Month', 'month': 'Month',
         'months': 'Month', 'day': 'Day', 'days': 'Day', 'hr': 'Hour', 'hrs': 'Hour', 'hour': 'Hour',
         'hours': 'Hour', 'min': 'Minute', 'mins': 'Minute', 'minute': 'Minute', 'minutes': 'Minute',
         'sec': 'Second', 'secs': 'Second', 'second': 'Second', 'seconds': 'Second'}[lower(word)]
    || CASE WHEN plural THEN 's' ELSE '' END;

-- A unit in FOCUS UnitFormat: `<plural-units>` ("Hours"), `<singular-unit>-<plural-time-units>`
-- ("GB-Hours"), `<plural-units>/<singular-time-unit>` ("GB/Hour"). Only the time part is respelled, to
-- what it means (GB-Month -> GB-Months, GB-Mo -> GB-Months, Hrs -> Hours, Requests/Hours ->
-- Requests/Hour): PricingUnit "MUST be semantically equal to" the price list's unit, so nothing else of a
-- unit is guessed at. Spaces are trimmed; any other unit is kept as the bill spells it. `parts` is the
-- unit cut into what comes before its last word, the `-` or `/` before it, and the word.
CREATE OR REPLACE TEMP MACRO focus_unit_parts(u, parts) AS
    CASE WHEN parts.word = '' THEN u
         WHEN parts.sep = '' THEN coalesce(focus_time_unit(parts.word, TRUE), u)
         WHEN parts.sep = '-' THEN coalesce(parts.head || '-' || focus_time_unit(parts.word, TRUE), u)
         ELSE coalesce(parts.head || '/' || focus_time_unit(parts.word, FALSE), u) END;
-- (each value is bound once, in a one-item list: a macro's argument is pasted wherever it is used)
CREATE OR REPLACE TEMP MACRO focus_unit(u) AS
    list_transform([regexp_replace(trim(focus_ascii(u)), '\s+', ' ', 'g')], lambda t:
        focus_unit_parts(t, regexp_extract(t, '^(?:(.*[^ /-]) ?([-/]) ?)?([A-Za-z]+)$', ['head', 'sep', 'word'])))[1];

-- FOCUS 1.2's ServiceSubcategory allowed values, each with its one parent ServiceCategory (the column's
-- "Allowed values" table, FOCUS_Spec v1.2 specification/columns/servicesubcategory.md).
CREATE OR REPLACE TEMP TABLE focus_service_subcategories AS
SELECT * FROM (VALUES
    ('AI and Machine Learning', 'AI Platforms'), ('AI and Machine Learning', 'Bots'),
    ('AI and Machine Learning', 'Generative AI'), ('AI and Machine Learning', 'Machine Learning'),
    ('AI and Machine Learning', 'Natural Language Processing'),
    ('AI and Machine Learning', 'Other (AI and Machine Learning)'),
    ('Analytics', 'Analytics Platforms'), ('Analytics', 'Business Intelligence'), ('Analytics', 'Data Processing'),
    ('Analytics', 'Search'), ('Analytics', 'Streaming Analytics'), ('Analytics', 'Other (Analytics)'),
    ('Business Applications', 'Productivity and Collaboration'),
    ('Business Applications', 'Other (Business Applications)'),
    ('Compute', 'Containers'), ('Compute', 'End User Computing'), ('Compute', 'Quantum Compute'),
    ('Compute', 'Serverless Compute'), ('Compute', 'Virtual Machines'), ('Compute', 'Other (Compute)'),
    ('Databases', 'Caching'), ('Databases', 'Data Warehouses'), ('Databases', 'Ledger Databases'),
    ('Databases', 'NoSQL Databases'), ('Databases', 'Relational Databases'), ('Databases', 'Time Series Databases'),
    ('Databases', 'Other (Databases)'),
    ('Developer Tools', 'Developer Platforms'), ('Developer Tools', 'Continuous Integration and Deployment'),
    ('Developer Tools', 'Development Environments'), ('Developer Tools', 'Source Code Management'),
    ('Developer Tools', 'Quality Assurance'), ('Developer Tools', 'Other (Developer Tools)'),
    ('Identity', 'Identity and Access Management'), ('Identity', 'Other (Identity)'),
    ('Integration', 'API Management'), ('Integration', 'Messaging'), ('Integration', 'Workflow Orchestration'),
    ('Integration', 'Other (Integration)'),
    ('Internet of Things', 'IoT Analytics'), ('Internet of Things', 'IoT Platforms'),
    ('Internet of Things', 'Other (Internet of Things)'),
    ('Management and Governance', 'Architecture'), ('Management and Governance', 'Compliance'),
    ('Management and Governance', 'Cost Management'), ('Management and Governance', 'Data Governance'),
    ('Management and Governance', 'Disaster Recovery'), ('Management and Governance', 'Endpoint Management'),
    ('Management and Governance', 'Observability'), ('Management and Governance', 'Support'),
    ('Management and Governance', 'Other (Management and Governance)'),
    ('Media', 'Content Creation'), ('Media', 'Gaming'), ('Media', 'Media Streaming'), ('Media', 'Mixed Reality'),
    ('Media', 'Other (Media)'),
    ('Migration', 'Data Migration'), ('Migration', 'Resource Migration'), ('Migration', 'Other (Migration)'),
    ('Mobile', 'Other (Mobile)'),
    ('Multicloud', 'Multicloud Integration'), ('Multicloud', 'Other (Multicloud)'),
    ('Networking', 'Application Networking'), ('Networking', 'Content Delivery'),
    ('Networking', 'Network Connectivity'), ('Networking', 'Network Infrastructure'),
    ('Networking', 'Network Routing'), ('Networking', 'Network Security'), ('Networking', 'Other (Networking)'),
    ('Security', 'Secret Management'), ('Security', 'Security Posture Management'),
    ('Security', 'Threat Detection and Response'), ('Security', 'Other (Security)'),
    ('Storage', 'Backup Storage'), ('Storage', 'Block Storage'), ('Storage', 'File Storage'),
    ('Storage', 'Object Storage'), ('Storage', 'Storage Platforms'), ('Storage', 'Other (Storage)'),
    ('Web', 'Application Platforms'), ('Web', 'Other (Web)'),
    ('Other', 'Other (Other)')
) AS t(service_category, service_subcategory);

-- An origin's ServiceSubcategory: the bill's when it is an allowed value under the line's ServiceCategory,
-- else that category's `Other (…)` value, FOCUS's value for a service no listed subcategory fits ("ServiceName
-- SHOULD be associated with the ServiceSubcategory "Other" when no suitable ServiceSubcategory is
-- available"). A bill that names no subcategory (most do not: it is Recommended, new in 1.1) says
-- nothing more, and a category FOCUS does not list (or none, on a quarantined row) gets `Other (Other)`:
-- never NULL, as the column requires.
CREATE OR REPLACE TEMP MACRO focus_service_subcategory(category, subcategory) AS coalesce(
    (SELECT any_value(service_subcategory) FROM focus_service_subcategories
     WHERE service_category = category AND service_subcategory = subcategory),
    (SELECT any_value(service_subcategory) FROM focus_service_subcategories
     WHERE service_category = category AND service_subcategory LIKE 'Other (%'),
    'Other (Other)');
