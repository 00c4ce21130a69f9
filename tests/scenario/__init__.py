"""The program across several runs of a modelled engine: `pulumi up`, the failure or `destroy`, the next `up`."""
