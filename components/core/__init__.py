"""Pure core: typed settings, catalogs, rules and rendering. Imports nothing from Pulumi."""
