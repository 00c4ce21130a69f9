"""What the image's vLLM release decides at start-up for a model on a GPU, from the release's
registry: the attention backend it selects, the longest context it derives, the quantization it
runs. Pure functions of the catalog's model facts and `engine.release_facts`; the rules read them."""
