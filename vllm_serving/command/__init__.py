"""The vLLM command line (argv and env) rendered from the settings; imports settings and engine."""
