"""A hidden Markov model with discrete emissions, fitted by EM (Baum-Welch).

The data are sampled from ``absjit.random.uniform`` draws (the same numbers
``jax.random`` gives for the same seed). Each EM step runs the forward-backward
recursions in log space with ``lax.scan`` and ``absjit.scipy.special.logsumexp``, then
re-estimates the initial, transition and emission probabilities; the whole step is
one ``jit``.
The log-likelihood must never decrease. When JAX is installed the very same program
runs under JAX as well and the two log-likelihood traces are compared.

Run with ``python examples/hmm_em.py`` (``--quick`` for a short run).
"""
import argparse
import time

import numpy as np


def make_program(jnp, lax, random, logsumexp, jit):
    """The model written once against a NumPy-like API (absjit's or JAX's)."""

    def draw(u, probs):
        """The category whose cumulative-probability bin holds ``u``."""
        return jnp.sum(u > jnp.cumsum(probs)[:-1])

    def sample(key, pi, A, B, T):
        u = random.uniform(key, (T, 2))      # all the randomness, drawn up front
        z0 = draw(u[0, 0], pi)

        def step(z, ut):
            return draw(ut[0], A[z]), (z, draw(ut[1], B[z]))

        _, (zs, xs) = lax.scan(step, z0, u)
        return zs, xs

    def em_step(params, xs):
        log_pi, log_A, log_B = params
        log_e = log_B[:, xs].T                                   # (T, K)

        def fwd(alpha, le):
            nxt = logsumexp(alpha[:, None] + log_A, axis=0) + le
            return nxt, nxt

        alpha0 = log_pi + log_e[0]
        _, alphas = lax.scan(fwd, alpha0, log_e[1:])
        alphas = jnp.concatenate([alpha0[None], alphas], axis=0)

        def bwd(beta, le):
            prev = logsumexp(log_A + (le + beta)[None, :], axis=1)
            return prev, prev

        betaT = jnp.zeros_like(log_pi)
        _, betas = lax.scan(bwd, betaT, log_e[1:], reverse=True)
        betas = jnp.concatenate([betas, betaT[None]], axis=0)

        loglik = logsumexp(alphas[-1])
        gamma = alphas + betas - loglik                          # log P(z_t | x)
        xi = (alphas[:-1, :, None] + log_A[None] + (log_e[1:] + betas[1:])[:, None, :]
              - loglik)                                          # log P(z_t, z_t+1 | x)
        new_pi = gamma[0]
        new_A = logsumexp(xi, axis=0) - logsumexp(gamma[:-1], axis=0)[:, None]
        M = log_B.shape[1]
        onehot = (xs[:, None] == jnp.arange(M)[None, :])
        masked = jnp.where(onehot[:, None, :], gamma[:, :, None], -jnp.inf)   # (T, K, M)
        new_B = logsumexp(masked, axis=0) - logsumexp(gamma, axis=0)[:, None]
        return (new_pi, new_A, new_B), loglik

    return jit(sample, static_argnums=(4,)), jit(em_step)


def fit(api, T, iters):
    jnp, lax, random, logsumexp, jit = api
    sample, em_step = make_program(jnp, lax, random, logsumexp, jit)
    pi = jnp.array([0.6, 0.3, 0.1], dtype=jnp.float32)
    A = jnp.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]], dtype=jnp.float32)
    B = jnp.array([[0.7, 0.2, 0.05, 0.05], [0.1, 0.6, 0.2, 0.1], [0.05, 0.05, 0.3, 0.6]],
                  dtype=jnp.float32)
    key = random.PRNGKey(0)
    k_data, k_init = random.split(key)
    _, xs = sample(k_data, pi, A, B, T)
    K, M = 3, 4
    ka, kb = random.split(k_init)
    A0 = random.uniform(ka, (K, K), minval=0.5, maxval=1.5)
    B0 = random.uniform(kb, (K, M), minval=0.5, maxval=1.5)
    params = (jnp.log(jnp.full((K,), 1.0 / K, dtype=jnp.float32)),
              jnp.log(A0 / A0.sum(1, keepdims=True)), jnp.log(B0 / B0.sum(1, keepdims=True)))
    trace = []
    for _ in range(iters):
        params, ll = em_step(params, xs)
        trace.append(float(ll))
    return np.asarray(xs), np.array(trace), [np.exp(np.asarray(p)) for p in params]


def absjit_api():
    import absjit
    import absjit.numpy as jnp
    from absjit import lax, random
    from absjit.scipy.special import logsumexp
    return jnp, lax, random, logsumexp, absjit.jit


def jax_api():
    import jax
    import jax.numpy as jnp
    from jax import lax, random
    from jax.scipy.special import logsumexp
    return jnp, lax, random, logsumexp, jax.jit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short sequence, few steps")
    args = parser.parse_args(argv)
    T, iters = (300, 8) if args.quick else (2000, 40)

    t0 = time.perf_counter()
    xs, trace, (pi, A, B) = fit(absjit_api(), T, iters)
    elapsed = time.perf_counter() - t0
    print(f"absjit: T={T}, {iters} EM steps in {elapsed:.2f} s")
    print("log-likelihood: " + " ".join(f"{v:.2f}" for v in trace[:3]) + " ... "
          + f"{trace[-1]:.2f}")
    assert np.all(np.diff(trace) >= -1e-2 * np.abs(trace[1:])), "EM decreased the likelihood"
    np.testing.assert_allclose(A.sum(1), 1.0, rtol=1e-4)
    np.testing.assert_allclose(B.sum(1), 1.0, rtol=1e-4)
    print("estimated transition matrix:\n" + np.array2string(A, precision=3))
    try:
        api = jax_api()
    except ImportError:
        print("JAX not installed: skipped the comparison with JAX")
        return trace
    jxs, jtrace, _ = fit(api, T, iters)
    same_data = np.array_equal(xs, jxs)
    print(f"JAX: same sampled sequence: {same_data}; max |loglik difference| = "
          f"{np.max(np.abs(jtrace - trace)):.2e}")
    assert same_data, "absjit.random and jax.random sampled different sequences"
    np.testing.assert_allclose(trace, jtrace, rtol=1e-4)
    print("absjit and JAX agree")
    return trace


if __name__ == "__main__":
    main()
