"""The scrape job the operator merges into prometheus.yml: where it scrapes, under which labels, and
how it authenticates; written out here as Prometheus's configuration reference spells it."""

from __future__ import annotations

import yaml

from tests.observability.helpers import observed_spec
from vllm_serving.observability.scrape import scrape_config, scrape_yaml


def test_a_docker_stack_is_scraped_on_its_host_port() -> None:
    assert scrape_config(observed_spec("v100")) == {"scrape_configs": [{
        "job_name": "vllm-v100", "scrape_interval": "15s", "metrics_path": "/metrics", "scheme": "http",
        "static_configs": [{"targets": ["localhost:30006"]}]}]}


def test_a_kubernetes_stack_is_scraped_at_its_service_with_its_namespace() -> None:
    (job,) = scrape_config(observed_spec("a100-k8s", observability={"scrapeInterval": "30s"}))["scrape_configs"]
    assert (job["job_name"], job["scrape_interval"]) == ("vllm", "30s")
    assert job["static_configs"] == [{"targets": ["vllm.vllm.svc.cluster.local:8000"],
                                      "labels": {"namespace": "vllm"}}]


def test_with_an_api_key_the_job_reads_a_token_file_the_operator_fills() -> None:
    (job,) = scrape_config(observed_spec("v100", ("apiKey",)))["scrape_configs"]
    assert job["authorization"] == {"type": "Bearer", "credentials_file": "/etc/prometheus/secrets/vllm-v100-api-key"}
    text = scrape_yaml(observed_spec("v100", ("apiKey",)))
    assert ("# /etc/prometheus/secrets/vllm-v100-api-key: put the stack's API key there "
            "(pulumi config get apiKey > FILE, mode 0600).") in text
    assert "# vLLM itself serves /metrics without the key (it checks only /v1 paths)" in text
    assert "authorization" not in scrape_yaml(observed_spec("v100")) and "apiKey" not in scrape_yaml(
        observed_spec("v100"))


def test_the_text_says_what_to_do_with_it_and_reads_back_as_the_config() -> None:
    spec = observed_spec("v100")
    text = scrape_yaml(spec)
    assert text.splitlines()[:2] == [
        "# Prometheus scrape config for the vLLM server of stack v100: merge this job into the",
        "# scrape_configs: of prometheus.yml; the alerts are vllm-stack render v100 --format alerts"
        " (under rule_files:)."]
    assert yaml.safe_load(text) == scrape_config(spec)
