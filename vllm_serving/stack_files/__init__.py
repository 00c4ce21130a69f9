"""Reading Pulumi stack files from disk offline, as Pulumi would merge them; imports rules and below."""
