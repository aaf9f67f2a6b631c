"""The cpu backend's lowering rules beyond the shared scalar spellings
(:mod:`absjit.backends.numba.lower_elementwise`): whole-array primitives as statements
(:mod:`.lower_arrays`, with convolutions, sorts, FFTs and decompositions in their own
modules), products laid out for their consumers (:mod:`.dot_fold`), 16-bit floats
(:mod:`.half`) and the per-equation host fallback (:mod:`.lower_host`)."""
