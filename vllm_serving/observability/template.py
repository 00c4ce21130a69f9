"""Query and text templates shared by the dashboard and the alerts.

Placeholders start with `%` (`%sel`, `%window`): `$` is Grafana's (`$job`) and Prometheus's
(`{{ $value }}`), `{}` is PromQL's. A literal percent sign is written `%%`.
"""

from __future__ import annotations

from string import Template


class Fill(Template):
    delimiter = "%"


def fill(template: str, **values: str) -> str:
    """`template` with every `%name` replaced; a placeholder without a value is an error."""
    return Fill(template).substitute(values)


def histogram_quantile(quantile: float, histogram: str, by: str = "le") -> str:
    """The `quantile` of a vLLM histogram over the window, from its `_bucket` series."""
    return f"histogram_quantile({quantile:g}, sum by ({by}) (rate({histogram}_bucket{{%sel}}[%window])))"


def histogram_mean(histogram: str) -> str:
    """The mean of a vLLM histogram over the window, from its `_sum` and `_count` series."""
    return f"sum(rate({histogram}_sum{{%sel}}[%window])) / sum(rate({histogram}_count{{%sel}}[%window]))"
