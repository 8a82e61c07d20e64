"""Empty text cells as missing values, the same on pandas 2 and pandas 3.

`frame.replace("", np.nan)` does this in one call, but on pandas 2 it also infers
new dtypes for the columns it touched and warns (a FutureWarning on every GEO
read) that this inference is going away. Here only text columns are touched, their
dtype stays `object`, and nothing is inferred: the same frame on both versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["blank_as_missing"]


def blank_as_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` with every `""` cell of its object columns as NaN.

    Parameters
    ----------
    frame : pandas.DataFrame
        Cells as read from a text file (GEO characteristics, a platform table, a
        Xena clinical matrix).

    Returns
    -------
    pandas.DataFrame
        The same index, columns and dtypes; numeric columns unchanged.
    """
    import pandas as pd  # at call time: core is imported where pandas is not (regress's Lasso)

    out = frame.copy()
    for position, dtype in enumerate(frame.dtypes):
        column = frame.iloc[:, position]
        if pd.api.types.is_object_dtype(dtype):
            values = column.to_numpy(dtype=object, copy=True)
            values[column.eq("").to_numpy(dtype=bool)] = np.nan
            kept = pd.Series(values, index=frame.index, dtype=object)  # object, not inferred
            out.isetitem(position, cast(Any, kept))  # pandas-stubs lists no Series here
        elif pd.api.types.is_string_dtype(dtype):  # pandas 3's text columns keep their dtype
            out.isetitem(position, column.mask(column.eq("")).array)
    return out
