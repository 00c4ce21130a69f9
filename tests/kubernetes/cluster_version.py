"""The Kubernetes version rendered objects are validated against."""

# A current release: kubernetes-validate 1.37 ships schemas for 1.25 to 1.37.
KUBERNETES_VERSION = "1.33.0"
