"""Tables printed for people."""

import polars as pl


def print_table(frame: pl.DataFrame, max_rows: int = 200) -> None:
    with pl.Config(tbl_rows=max_rows, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=60,
                   tbl_hide_column_data_types=True, tbl_hide_dataframe_shape=True, thousands_separator=","):
        print(frame)
    if frame.height > max_rows:
        print(f"… {frame.height - max_rows} more rows (use --csv for all)")
