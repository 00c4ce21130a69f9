"""GPU and model catalogs and the Hugging Face config.json reader.

Hardware and architectures as data; imports only the base modules.
"""
