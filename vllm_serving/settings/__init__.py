"""Typed stack settings, one module per config section (`vllm-serving:<section>`).

Imports catalog, engine and the base modules only.

Keys are camelCase in the stack YAML and snake_case here. Every field is typed, defaulted and
documented in one line; validation sits next to the field it guards. Cross-section facts (does
the GPU exist, does TP divide the heads) are the compatibility rules' job (`vllm_serving.rules`).
"""

from vllm_serving.engine.defaults import VLLM_CACHE_PATH, VLLM_PORT
from vllm_serving.settings.base import EnvName, Seconds, Section, SizeBytes, fix_error
from vllm_serving.settings.container import ContainerSettings, NetworkSettings
from vllm_serving.settings.engine import (
    AttentionBackend,
    Dtype,
    EngineSettings,
    KvCacheDtype,
    Quantization,
    SpeculativeSettings,
)
from vllm_serving.settings.hardware import HardwareSettings
from vllm_serving.settings.image import ImageSettings
from vllm_serving.settings.kubernetes import KubernetesSettings
from vllm_serving.settings.model import CacheSettings, ModelSettings
from vllm_serving.settings.release import ReleaseSettings
from vllm_serving.settings.stack import SECRET_KEYS, SECTIONS, StackSettings
from vllm_serving.settings.target import TargetSettings

__all__ = [
    "SECRET_KEYS", "SECTIONS", "VLLM_CACHE_PATH", "VLLM_PORT", "AttentionBackend", "CacheSettings",
    "ContainerSettings", "Dtype", "EngineSettings", "EnvName", "HardwareSettings", "ImageSettings",
    "KubernetesSettings", "KvCacheDtype", "ModelSettings", "NetworkSettings", "Quantization",
    "ReleaseSettings", "Seconds", "Section", "SizeBytes", "SpeculativeSettings", "StackSettings",
    "TargetSettings", "fix_error",
]
