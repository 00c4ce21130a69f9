"""What a release carries and how a stack promotes another's release; imports command, settings and below."""
