"""The Parquet form of an instance: the job columns of its compact form as the table, and the
rest of the compact form (family, name, cluster, profiles, ...) as JSON in the file's
metadata under :data:`KEY`. Read back, it is the compact form again, which the family
validates as it does the JSON one (``jobs.release[17]`` names row 17 of column release).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from dlsched.errors import InstanceError

#: The metadata key holding the instance's fields other than its jobs.
KEY = b"dlsched.instance"
#: The first bytes of every Parquet file.
MAGIC = b"PAR1"


def is_parquet(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def to_bytes(compact: dict[str, Any]) -> bytes:
    """A compact dict (``jobs`` an object of equally long columns) as a Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {}
    for name, values in compact["jobs"].items():
        col = pa.array(values)
        if pa.types.is_string(col.type) and len(set(values)) * 2 < len(values):
            col = col.dictionary_encode()  # groups and users recur
        columns[name] = col
    table = pa.table(columns)
    head = {k: v for k, v in compact.items() if k != "jobs"}
    table = table.replace_schema_metadata({KEY: json.dumps(head).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def read(path: Path) -> dict[str, Any]:
    """The compact dict a Parquet instance file holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = str(path)
    try:  # ParquetFile.read: a tenth of read_table's time and half its memory here
        table = pq.ParquetFile(path).read(use_threads=False)
    except (OSError, pa.ArrowException) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InstanceError(source, "", None, f"not a readable Parquet file: {first}") from None
    meta = (table.schema.metadata or {}).get(KEY)
    if meta is None:
        raise InstanceError(
            source, "", None, "no instance in the Parquet metadata (write it with dlsched)"
        )
    try:
        head = json.loads(meta)
    except ValueError as e:
        raise InstanceError(source, "metadata", None, f"broken JSON: {e}") from None
    if not isinstance(head, dict):
        raise InstanceError(source, "metadata", head, "expected a JSON object")
    return {**head, "jobs": {name: _values(table.column(name)) for name in table.column_names}}


def _values(column: Any) -> list[Any]:
    """A column as a Python list: numbers read from their buffer by numpy (pyarrow's own
    to_numpy imports pandas, 40 MB), a dictionary-encoded column from its dictionary (each
    distinct string one object), anything else (strings, nulls) by pyarrow."""
    import pyarrow as pa

    col = column.combine_chunks()
    if col.null_count:
        return list(col.to_pylist())
    if pa.types.is_dictionary(col.type):
        words = col.dictionary.to_pylist()
        return [words[i] for i in _numbers(col.indices)]
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
        return _numbers(col)
    return list(col.to_pylist())


def _numbers(col: Any) -> list[Any]:
    """A numeric array without nulls as a list of Python numbers."""
    import numpy as np

    dtype = np.dtype(col.type.to_pandas_dtype())
    values = np.frombuffer(col.buffers()[1], dtype=dtype)[col.offset : col.offset + len(col)]
    return list(values.tolist())


__all__ = ["KEY", "MAGIC", "is_parquet", "read", "to_bytes"]
