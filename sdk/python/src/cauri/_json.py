"""JSON that never puts money through a float.

Answers are decoded with non-integer numbers as decimal.Decimal (integers
stay int). Bodies are encoded from int, Decimal and strings of digits
("15000", "15.5") written as JSON numbers; a float is refused.
"""

import json
import re
from decimal import Decimal
from typing import Any, List

_AMOUNT = re.compile(r"^[0-9]+(\.[0-9]+)?$")
# Fields that are money (or a number the API wants as a JSON number): a
# string of digits given for one of them is sent as a number.
NUMBER_FIELDS = frozenset({"amount"})


def loads(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8"), parse_float=Decimal)


# Objects whose values are the caller's own strings, never money.
FREE_FORM = frozenset({"metadata"})


def dumps(obj: Any) -> bytes:
    out: List[str] = []
    _write(obj, out, None)
    return "".join(out).encode("utf-8")


def _number(d: Decimal) -> str:
    if not d.is_finite():
        raise ValueError("cauri: a number must be finite, not %s" % d)
    s = format(d, "f")
    return s


def _write(obj: Any, out: List[str], key: Any) -> None:
    if obj is None or isinstance(obj, (bool, str)) and not (key in NUMBER_FIELDS and isinstance(obj, str)):
        out.append(json.dumps(obj, ensure_ascii=False))
    elif isinstance(obj, str):  # a string of digits for an amount
        if not _AMOUNT.match(obj.strip()):
            raise ValueError("cauri: %s must be a number (int, Decimal or a string of digits), not %r" % (key, obj))
        out.append(_number(Decimal(obj.strip())))
    elif isinstance(obj, float):
        raise TypeError("cauri: %s is a float; money never goes through a float: pass an int, a Decimal or a string of digits" % (key or "a value"))
    elif isinstance(obj, int):
        out.append(str(int(obj)))
    elif isinstance(obj, Decimal):
        out.append(_number(obj))
    elif isinstance(obj, dict):
        out.append("{")
        for i, (k, v) in enumerate(obj.items()):
            if i:
                out.append(",")
            out.append(json.dumps(str(k), ensure_ascii=False))
            out.append(":")
            if k in FREE_FORM and isinstance(v, dict):
                _write_free(v, out)
            else:
                _write(v, out, k)
        out.append("}")
    elif isinstance(obj, (list, tuple)):
        out.append("[")
        for i, v in enumerate(obj):
            if i:
                out.append(",")
            _write(v, out, key if isinstance(v, (str, int, Decimal, float)) and key in NUMBER_FIELDS else None)
        out.append("]")
    else:
        raise TypeError("cauri: cannot send a %s as JSON" % type(obj).__name__)


def _write_free(obj: dict, out: List[str]) -> None:  # type: ignore[type-arg]
    """A free-form object (metadata): its keys are not field names."""
    out.append("{")
    for i, (k, v) in enumerate(obj.items()):
        if i:
            out.append(",")
        out.append(json.dumps(str(k), ensure_ascii=False))
        out.append(":")
        _write(v, out, None)
    out.append("}")
