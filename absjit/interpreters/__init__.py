"""Interpreters of jaxprs and traces: staging (make_jaxpr), autodiff, batching."""
