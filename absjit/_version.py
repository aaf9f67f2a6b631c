"""absjit's version: a leaf module, so that what records it (the compile cache's keys,
the backends' disk caches, ``print_environment_info``) need not import the package."""
__version__ = "0.1.0"
