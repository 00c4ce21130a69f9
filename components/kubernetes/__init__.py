"""The Kubernetes backend (`target.kind: kubernetes`); the only package that imports pulumi_kubernetes."""
