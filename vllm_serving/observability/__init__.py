"""What operators watch once a stack runs: the Prometheus scrape config, the alert rules and the
Grafana dashboard, all querying the metric names of the stack's own vLLM release.

Imports spec and below (engine for the release registry, settings). The Kubernetes objects that
carry them (ServiceMonitor, PrometheusRule, dashboard ConfigMap) are render's
(`render/kubernetes/monitoring.py`); the check that every name exists is a rule
(`rules/observability.py`).
"""
