"""The metric names a PromQL expression reads, and what makes it unparseable, without Prometheus.

Not a PromQL parser: a tokenizer that knows enough of the grammar to tell a metric name from a
function, an aggregation, a keyword, a label name (inside `{...}` and in the lists after
`by`/`without`/`on`/`ignoring`/`group_left`/`group_right`) and a duration, and to find unbalanced
brackets and unknown functions. `promtool check rules` is the real parser (tests/observability).
Grafana's variables (`$job`, `${model_name}`, `$__rate_interval`) are opaque values here.
"""

from __future__ import annotations

import re
from functools import cache

import msgspec

# Prometheus 3.x, promql/parser/functions.go, plus the aggregation operators (lex.go's key words).
FUNCTIONS = frozenset({
    "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh",
    "avg_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh",
    "count_over_time", "day_of_month", "day_of_week", "day_of_year", "days_in_month", "deg", "delta",
    "deriv", "double_exponential_smoothing", "exp", "floor", "histogram_avg", "histogram_count",
    "histogram_fraction", "histogram_quantile", "histogram_stddev", "histogram_stdvar", "histogram_sum",
    "holt_winters", "hour", "idelta", "increase", "info", "irate", "label_join", "label_replace",
    "last_over_time", "ln", "log10", "log2", "mad_over_time", "max_over_time", "min_over_time", "minute",
    "month", "pi", "predict_linear", "present_over_time", "quantile_over_time", "rad", "rate", "resets",
    "round", "scalar", "sgn", "sin", "sinh", "sort", "sort_by_label", "sort_by_label_desc", "sort_desc",
    "sqrt", "stddev_over_time", "stdvar_over_time", "sum_over_time", "tan", "tanh", "time", "timestamp",
    "vector", "year", "start", "end",  # start()/end(): the `@` modifier's preprocessors
})
AGGREGATIONS = frozenset({
    "avg", "bottomk", "count", "count_values", "group", "limit_ratio", "limitk", "max", "min",
    "quantile", "stddev", "stdvar", "sum", "topk",
})
LABEL_LISTS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
"""Key words whose parenthesised list holds label names."""
KEYWORDS = LABEL_LISTS | {"and", "or", "unless", "atan2", "bool", "offset", "inf", "nan"}

_TOKEN = re.compile(r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)
  | (?P<variable>\$\{[^}]*\}|\$[A-Za-z_]\w*)
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+(?![A-Za-z0-9_:]))
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<identifier>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<bracket>[(){}\[\]])
  | (?P<operator>==|!=|>=|<=|=~|!~|[-+*/%^=<>@,:])
""", re.VERBOSE)
_CLOSING = {")": "(", "]": "[", "}": "{"}


class Token(msgspec.Struct, frozen=True):
    kind: str
    text: str


class Reading(msgspec.Struct, frozen=True):
    """What one expression reads (metric names, in order of first use) and what is wrong with it."""

    metrics: tuple[str, ...]
    problems: tuple[str, ...]


def tokens(expr: str) -> tuple[list[Token], list[str]]:
    """The expression's tokens (whitespace and comments dropped) and the characters it cannot read."""
    found: list[Token] = []
    problems: list[str] = []
    pos = 0
    while pos < len(expr):
        match = _TOKEN.match(expr, pos)
        if match is None:
            problems.append(f"unexpected {expr[pos]!r} at {pos}")
            pos += 1
            continue
        kind = match.lastgroup
        assert kind is not None
        if kind != "space":
            found.append(Token(kind, match.group()))
        pos = match.end()
    return found, problems


@cache  # a Reading is immutable; `check` reads the same alert expressions for every stack
def read(expr: str) -> Reading:
    """The metric names `expr` selects and its problems (unbalanced brackets, unknown functions)."""
    toks, problems = tokens(expr)
    if not toks:
        problems.append("empty expression")
    metrics: list[str] = []
    open_brackets: list[str] = []  # "(", "[", "{", or "labels" for a by/without/on/... list
    pending_label_list = False
    for i, tok in enumerate(toks):
        following = toks[i + 1] if i + 1 < len(toks) else None
        calls = following is not None and following.text == "("
        if tok.kind == "bracket":
            if tok.text in "([{":
                open_brackets.append("labels" if tok.text == "(" and pending_label_list else tok.text)
                pending_label_list = False
            elif not open_brackets or _CLOSING[tok.text] != open_brackets[-1].replace("labels", "("):
                problems.append(f"unbalanced {tok.text!r}")
            else:
                open_brackets.pop()
            continue
        if tok.kind != "identifier":
            continue
        inside = open_brackets[-1] if open_brackets else None
        if inside == "{":
            name = _name_matcher(toks, i)
            if name is not None:
                metrics.append(name)
            continue  # a label name
        if inside in ("labels", "["):
            continue  # label names; `[5m:1m]` holds no names
        word = tok.text.lower()
        if word in LABEL_LISTS:
            pending_label_list = calls
        elif word in AGGREGATIONS or word in KEYWORDS:
            continue
        elif calls:
            if tok.text not in FUNCTIONS:
                problems.append(f"unknown function {tok.text!r}")
        else:
            metrics.append(tok.text)  # PromQL reads a function's name without `(` as a metric too
    problems += [f"unclosed {b.replace('labels', '(')!r}" for b in open_brackets]
    return Reading(tuple(dict.fromkeys(metrics)), tuple(problems))


def _name_matcher(toks: list[Token], i: int) -> str | None:
    """The metric name of `{__name__="x"}` (an equality matcher on the name), else None."""
    if toks[i].text != "__name__" or i + 2 >= len(toks):
        return None
    op, value = toks[i + 1], toks[i + 2]
    if op.text != "=" or value.kind != "string":
        return None
    return value.text[1:-1]


def metric_names(expr: str) -> tuple[str, ...]:
    """The metric names `expr` selects, in order of first use."""
    return read(expr).metrics


_LABEL_VALUES = re.compile(r"label_values\((?:(?P<selector>.+),\s*)?(?P<label>[A-Za-z_]\w*)\)", re.S)


def variable_selector(query: str) -> str | None:
    """The PromQL selector inside a Grafana `label_values(selector, label)` variable query."""
    match = _LABEL_VALUES.fullmatch(query.strip())
    return match.group("selector") if match else None
