"""Docker-host backend: thin Pulumi components over the pure core's container spec."""
