SELECT * EXCLUDE (_file) FROM staging.stg_dcgm__gpu_minutes WHERE day = $day::DATE
