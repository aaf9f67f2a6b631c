"""What the import alias (:mod:`absjit.compat_jax`) serves as ``jax._src``: only the
helpers from JAX's private modules that JAX's own documentation imports
(``jax._src.util.safe_map``/``safe_zip``). Any other ``jax._src`` name is not provided.
"""
