"""What the two Numba backends (``numba_cpu``, ``numba_cuda``) share: the loop IR
rendered as Python source (:mod:`.render`, :mod:`.render_periodic`) and the scalar
spellings of the elementwise primitives (:mod:`.lower_elementwise`). Each backend
subclasses the renderer for what only it has (array rules, thread-pool loops, kernel
launches); neither backend's modules are imported from here."""
