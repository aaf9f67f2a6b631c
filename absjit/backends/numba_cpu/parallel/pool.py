"""A small native task pool for parallel loops and blocked matrix products, whose idle
threads sleep.

Numba's threading layers fit ``prange`` loops, but under contention their waiting
costs: a TBB thread that has run out of work, or waits for a block another thread
still holds, spins and yields, taking CPU from the very thread it waits for. On 2 cores
with one busy process, a 100x1000 @ 1000x2000 product split into blocks for Numba's
threads ran 1.8-1.9x slower than on an idle machine, against 1.2-1.7x for ``jax.jit``,
whose pool threads sleep. The blocks of a product (:func:`.blas_kernels._pgemm_pool`)
and the chunks of a parallel loop (:func:`.loop_kernels._pool_for`,
``absjit_pool_for``) therefore run here:

* the calling thread and up to ``nthreads - 1`` native workers take tasks one at a
  time from a shared counter, so a thread another process slows down takes fewer
  tasks; :mod:`.threads` sets ``nthreads`` (:func:`set_threads`): every core, and one
  more per core other processes keep busy, up to twice the cores (``2 * N - 1``
  workers are started, ``N`` being Numba's thread count);
* a worker with nothing to do spins for :data:`SPIN` pause instructions (a product
  that follows another finds it awake), then sleeps on a futex; a worker that finds no
  free place in a job goes straight back to sleep; the caller, once every task is
  taken, spins :data:`WAIT_SPIN` pauses for the last one to finish, then sleeps;
* while other processes keep the cores busy, the workers are kept off the core the
  caller runs on (pinned to the process's other cores, again whenever the caller has
  moved): a woken worker queued on the caller's core would run only once the caller
  had taken every task, which made selu on a busy 2-core machine take 0.10 or 0.20 ms
  from one run to the next. On an idle machine they may run anywhere: the scheduler
  finds them an idle core, and a pinned worker sharing its core with another thread
  of the process that spins (JAX's, in the benchmarks) made an MLP 1.5x slower;
* a second caller while a product runs (another Python thread) runs its tasks on its
  own thread, so callers never wait for each other; so does a call allowed one thread;
* a forked child starts its own workers at its first product (the parent's do not
  exist there).

The pool is LLVM IR compiled with llvmlite once per process, when the first kernel that
uses it is compiled or loaded (about 15 ms); kernels reach it through the symbols
``absjit_pool_gemm`` and ``absjit_pool_for``, by name, so they can be cached on disk.
Loops use :func:`set_loop_threads` threads (every available core: :mod:`.threads`).
It needs ``futex`` and POSIX threads: Linux on x86-64 and AArch64. Elsewhere :func:`available`
is false and products run their blocks in Numba's threads
(:func:`.blas_kernels._pgemm_prange`).
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
import threading

__all__ = ["available", "loops_enabled", "built", "failure", "ensure", "set_threads",
           "threads", "set_loop_threads", "loop_threads", "set_keep_off", "keep_off",
           "set_gemm64", "SPIN",
           "WAIT_SPIN", "LOOP_TASKS", "run_python"]

#: Pause instructions an idle worker spins through before it sleeps (10-50 us,
#: depending on the processor's pause latency).
SPIN = 1000
#: Pause instructions the caller spins through, waiting for the last task, before it
#: sleeps.
WAIT_SPIN = 1000
#: Tasks per thread a parallel loop is cut into (:func:`.loop_kernels._pool_for`).
LOOP_TASKS = 8

_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}
_PAUSE = {"x86_64": "call void @llvm.x86.sse2.pause()",
          "aarch64": 'call void asm sideeffect "yield", ""()'}
_PAUSE_DECL = {"x86_64": "declare void @llvm.x86.sse2.pause()", "aarch64": ""}

_lock = threading.Lock()
_engine = None           # the llvmlite execution engine (kept alive)
_addresses: dict = {}
_failed = None           # why the pool could not be built, if it could not


def _machine():
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def available() -> bool:
    """Whether this platform runs the pool (Linux on x86-64 or AArch64)."""
    return sys.platform.startswith("linux") and _machine() in _SYS_FUTEX


def loops_enabled() -> bool:
    """Whether kernels compiled from now on run their parallel loops on the pool
    (:mod:`.loop_kernels`): where it is available and could be built, unless
    ``ABSJIT_POOL_LOOPS=0``, which makes them ``prange`` loops on Numba's threading
    layer (as they are where the pool failed to build: :func:`failure`)."""
    return available() and _failed is None and \
        os.environ.get("ABSJIT_POOL_LOOPS", "1").strip().lower() \
        not in ("0", "false", "no", "off")


# Globals: gen (futex word, the job's generation), next ((gen << 32) | next task; the low
# half all ones while a job is being published), done (tasks finished; futex word the
# caller sleeps on), slots (workers that may still join the job), fn/ctx/ntasks (the
# job), lock (a job is running), pid (the process the workers belong to).
_IR = r"""
@gen = internal global i32 0, align 4
@sleepers = internal global i32 0, align 4
@next = internal global i64 4294967295, align 8
@done = internal global i32 0, align 4
@slots = internal global i32 0, align 4
@fn = internal global i64 0, align 8
@ctx = internal global i64 0, align 8
@ntasks = internal global i64 0, align 8
@lock = internal global i32 0, align 4
@pid = internal global i32 0, align 4
@nworkers = internal global i32 0, align 4
@spin = internal global i64 0, align 8
@waitspin = internal global i64 0, align 8
@xxgemm = internal global i64 0, align 8
@gemm64 = internal global [8 x i64] zeroinitializer, align 8
@maxthreads = internal global i64 1, align 8
@loopthreads = internal global i64 1, align 8
@allowed = internal global [16 x i64] zeroinitializer, align 8
@threads = internal global [256 x i64] zeroinitializer, align 8
@started = internal global i32 0, align 4
@offcpu = internal global i32 -1, align 4
@keepoff = internal global i32 0, align 4

declare i64 @syscall(i64, ...)
declare i32 @getpid()
declare i32 @sched_getcpu()
declare i32 @pthread_setaffinity_np(i64, i64, i8*)
declare i32 @pthread_create(i64*, i8*, i8* (i8*)*, i8*)
declare i32 @pthread_detach(i64)
{pause_decl}

define internal void @pause() alwaysinline {{
  {pause}
  ret void
}}

define internal void @futex_wait(i32* %addr, i32 %val) noinline {{
  %a = ptrtoint i32* %addr to i64
  %v = zext i32 %val to i64
  %r = call i64 (i64, ...) @syscall(i64 {sys_futex}, i64 %a, i64 128, i64 %v, i64 0)
  ret void
}}

define internal void @futex_wake(i32* %addr, i32 %n) noinline {{
  %a = ptrtoint i32* %addr to i64
  %v = zext i32 %n to i64
  %r = call i64 (i64, ...) @syscall(i64 {sys_futex}, i64 %a, i64 129, i64 %v)
  ret void
}}

; Take tasks of the current job until none is left.
define internal void @run_tasks() {{
entry:
  br label %loop
loop:
  %v = load atomic i64, i64* @next seq_cst, align 8
  %idx = and i64 %v, 4294967295
  %notready = icmp eq i64 %idx, 4294967295
  br i1 %notready, label %out, label %check
check:
  %f = load atomic i64, i64* @fn seq_cst, align 8
  %c = load atomic i64, i64* @ctx seq_cst, align 8
  %n = load atomic i64, i64* @ntasks seq_cst, align 8
  %more = icmp ult i64 %idx, %n
  br i1 %more, label %claim, label %out
claim:
  %v1 = add i64 %v, 1
  %pair = cmpxchg i64* @next, i64 %v, i64 %v1 seq_cst seq_cst
  %ok = extractvalue {{ i64, i1 }} %pair, 1
  br i1 %ok, label %run, label %loop
run:
  %fp = inttoptr i64 %f to void (i64, i64)*
  call void %fp(i64 %idx, i64 %c)
  %d = atomicrmw add i32* @done, i32 1 seq_cst
  %d1 = add i32 %d, 1
  %d64 = zext i32 %d1 to i64
  %fin = icmp eq i64 %d64, %n
  br i1 %fin, label %wake, label %loop
wake:
  call void @futex_wake(i32* @done, i32 1)
  br label %loop
out:
  ret void
}}

define internal i8* @worker(i8* %arg) {{
entry:
  %seenp = alloca i32, align 4
  %ip = alloca i64, align 8
  %g0 = load atomic i32, i32* @gen seq_cst, align 4
  store i32 %g0, i32* %seenp, align 4
  br label %top
top:
  store i64 0, i64* %ip, align 8
  br label %spin
spin:
  %seen = load i32, i32* %seenp, align 4
  %g = load atomic i32, i32* @gen seq_cst, align 4
  %new = icmp ne i32 %g, %seen
  br i1 %new, label %got, label %spin2
spin2:
  %i = load i64, i64* %ip, align 8
  %lim = load atomic i64, i64* @spin monotonic, align 8
  %more = icmp ult i64 %i, %lim
  br i1 %more, label %dopause, label %sleep
dopause:
  call void @pause()
  %i1 = add i64 %i, 1
  store i64 %i1, i64* %ip, align 8
  br label %spin
sleep:
  %seen2 = load i32, i32* %seenp, align 4
  %s0 = atomicrmw add i32* @sleepers, i32 1 seq_cst
  call void @futex_wait(i32* @gen, i32 %seen2)
  %s1 = atomicrmw sub i32* @sleepers, i32 1 seq_cst
  br label %top
got:
  store i32 %g, i32* %seenp, align 4
  %sl = atomicrmw sub i32* @slots, i32 1 seq_cst
  %can = icmp sgt i32 %sl, 0
  br i1 %can, label %work, label %sleep
work:
  call void @run_tasks()
  br label %top
}}

; Start this process's workers once (again in a forked child).
define internal void @ensure_started() {{
entry:
  %tid = alloca i64, align 8
  %ip = alloca i32, align 4
  %me = call i32 @getpid()
  %p = load atomic i32, i32* @pid seq_cst, align 4
  %same = icmp eq i32 %p, %me
  br i1 %same, label %done, label %try
try:
  %x = cmpxchg i32* @pid, i32 %p, i32 %me seq_cst seq_cst
  %won = extractvalue {{ i32, i1 }} %x, 1
  br i1 %won, label %reset, label %done
reset:
  store atomic i32 0, i32* @lock seq_cst, align 4
  store atomic i32 0, i32* @sleepers seq_cst, align 4
  store atomic i32 0, i32* @slots seq_cst, align 4
  store i32 -1, i32* @offcpu, align 4
  store atomic i32 0, i32* @started seq_cst, align 4
  store atomic i64 4294967295, i64* @next seq_cst, align 8
  store i32 0, i32* %ip, align 4
  br label %loop
loop:
  %i = load i32, i32* %ip, align 4
  %nw = load atomic i32, i32* @nworkers seq_cst, align 4
  %more = icmp slt i32 %i, %nw
  br i1 %more, label %create, label %done
create:
  %rc = call i32 @pthread_create(i64* %tid, i8* null, i8* (i8*)* @worker, i8* null)
  %bad = icmp ne i32 %rc, 0
  br i1 %bad, label %done, label %detach
detach:
  %t = load i64, i64* %tid, align 8
  %rd = call i32 @pthread_detach(i64 %t)
  %fits = icmp slt i32 %i, 256
  br i1 %fits, label %keep, label %next
keep:
  %i64 = sext i32 %i to i64
  %slot = getelementptr [256 x i64], [256 x i64]* @threads, i64 0, i64 %i64
  store i64 %t, i64* %slot, align 8
  %kept = add i32 %i, 1
  store atomic i32 %kept, i32* @started seq_cst, align 4
  br label %next
next:
  %i1 = add i32 %i, 1
  store i32 %i1, i32* %ip, align 4
  br label %loop
done:
  ret void
}}

define internal void @run_inline(i64 %f, i64 %c, i64 %n) {{
entry:
  %ip = alloca i64, align 8
  store i64 0, i64* %ip, align 8
  %fp = inttoptr i64 %f to void (i64, i64)*
  br label %loop
loop:
  %i = load i64, i64* %ip, align 8
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %out
body:
  call void %fp(i64 %i, i64 %c)
  %i1 = add i64 %i, 1
  store i64 %i1, i64* %ip, align 8
  br label %loop
out:
  ret void
}}

; While other processes keep the cores busy (keepoff, set by absjit.threads), keep the
; workers off the caller's core (while the caller holds the job lock): with no core
; idle, a woken worker queued behind the caller would run only once the caller has
; done every task. Re-pinned only when the caller has moved to another core since the
; last job; given every allowed core again once the machine is idle, where the
; scheduler finds them an idle core itself and a fixed core may be one another
; thread of the process keeps busy.
define internal void @keep_off_caller(i32 %nw) {{
entry:
  %mask = alloca [16 x i64], align 8
  %on = load atomic i32, i32* @keepoff monotonic, align 4
  %off = icmp eq i32 %on, 0
  br i1 %off, label %unpin, label %getcpu
unpin:
  %was = load i32, i32* @offcpu, align 4
  %pinned = icmp ne i32 %was, -1
  br i1 %pinned, label %restore, label %out
restore:
  store i32 -1, i32* @offcpu, align 4
  %all0 = load [16 x i64], [16 x i64]* @allowed, align 8
  store [16 x i64] %all0, [16 x i64]* %mask, align 8
  call void @pin_workers(i32 %nw, [16 x i64]* %mask)
  br label %out
getcpu:
  %cpu = call i32 @sched_getcpu()
  %neg = icmp slt i32 %cpu, 0
  %big = icmp sge i32 %cpu, 1024
  %skip = or i1 %neg, %big
  br i1 %skip, label %out, label %check
check:
  %old = load i32, i32* @offcpu, align 4
  %same = icmp eq i32 %old, %cpu
  br i1 %same, label %out, label %build
build:
  %all = load [16 x i64], [16 x i64]* @allowed, align 8
  store [16 x i64] %all, [16 x i64]* %mask, align 8
  %word = lshr i32 %cpu, 6
  %w64 = zext i32 %word to i64
  %bit = and i32 %cpu, 63
  %b64 = zext i32 %bit to i64
  %one = shl i64 1, %b64
  %inv = xor i64 %one, -1
  %wp = getelementptr [16 x i64], [16 x i64]* %mask, i64 0, i64 %w64
  %wv = load i64, i64* %wp, align 8
  %nv = and i64 %wv, %inv
  store i64 %nv, i64* %wp, align 8
  %anyv = call i64 @or_words([16 x i64]* %mask)
  %none = icmp eq i64 %anyv, 0
  br i1 %none, label %out, label %pin
pin:
  store i32 %cpu, i32* @offcpu, align 4
  call void @pin_workers(i32 %nw, [16 x i64]* %mask)
  br label %out
out:
  ret void
}}

; Set the affinity of the first nw workers this process started (their handles kept
; in @threads; fewer when pthread_create failed part-way) to mask.
define internal void @pin_workers(i32 %nw, [16 x i64]* %mask) {{
entry:
  %ip = alloca i32, align 4
  store i32 0, i32* %ip, align 4
  %m8 = bitcast [16 x i64]* %mask to i8*
  %have = load atomic i32, i32* @started seq_cst, align 4
  br label %loop
loop:
  %i = load i32, i32* %ip, align 4
  %more = icmp slt i32 %i, %nw
  %kept = icmp slt i32 %i, %have
  %go = and i1 %more, %kept
  br i1 %go, label %pin, label %out
pin:
  %i64 = sext i32 %i to i64
  %slot = getelementptr [256 x i64], [256 x i64]* @threads, i64 0, i64 %i64
  %t = load i64, i64* %slot, align 8
  %zero = icmp eq i64 %t, 0
  br i1 %zero, label %step, label %set
set:
  %rc = call i32 @pthread_setaffinity_np(i64 %t, i64 128, i8* %m8)
  br label %step
step:
  %i1 = add i32 %i, 1
  store i32 %i1, i32* %ip, align 4
  br label %loop
out:
  ret void
}}

define internal i64 @or_words([16 x i64]* %m) {{
entry:
  %acc = alloca i64, align 8
  %ip = alloca i64, align 8
  store i64 0, i64* %acc, align 8
  store i64 0, i64* %ip, align 8
  br label %loop
loop:
  %i = load i64, i64* %ip, align 8
  %more = icmp ult i64 %i, 16
  br i1 %more, label %body, label %out
body:
  %p = getelementptr [16 x i64], [16 x i64]* %m, i64 0, i64 %i
  %w = load i64, i64* %p, align 8
  %a = load i64, i64* %acc, align 8
  %a1 = or i64 %a, %w
  store i64 %a1, i64* %acc, align 8
  %i1 = add i64 %i, 1
  store i64 %i1, i64* %ip, align 8
  br label %loop
out:
  %r = load i64, i64* %acc, align 8
  ret i64 %r
}}

; Run fn(t, ctx) for t in [0, n) on at most nthreads threads (the caller's included;
; 0: the count set by absjit_pool_set_threads).
define void @absjit_pool_run(i64 %f, i64 %c, i64 %n, i64 %nthreads0) {{
entry:
  %ip = alloca i64, align 8
  %dflt = icmp sle i64 %nthreads0, 0
  %mt = load atomic i64, i64* @maxthreads monotonic, align 8
  %nthreads = select i1 %dflt, i64 %mt, i64 %nthreads0
  %few = icmp sle i64 %nthreads, 1
  %small = icmp sle i64 %n, 1
  %serial = or i1 %few, %small
  br i1 %serial, label %inline, label %start
start:
  call void @ensure_started()
  %nw = load atomic i32, i32* @nworkers seq_cst, align 4
  %noworkers = icmp sle i32 %nw, 0
  br i1 %noworkers, label %inline, label %trylock
trylock:
  %lk = cmpxchg i32* @lock, i32 0, i32 1 seq_cst seq_cst
  %got = extractvalue {{ i32, i1 }} %lk, 1
  br i1 %got, label %publish, label %inline
inline:
  call void @run_inline(i64 %f, i64 %c, i64 %n)
  ret void
publish:
  call void @keep_off_caller(i32 %nw)
  %g = load atomic i32, i32* @gen seq_cst, align 4
  %g1 = add i32 %g, 1
  %g64 = zext i32 %g1 to i64
  %hi = shl i64 %g64, 32
  %sentinel = or i64 %hi, 4294967295
  store atomic i64 %sentinel, i64* @next seq_cst, align 8
  store atomic i64 %f, i64* @fn seq_cst, align 8
  store atomic i64 %c, i64* @ctx seq_cst, align 8
  store atomic i64 %n, i64* @ntasks seq_cst, align 8
  store atomic i32 0, i32* @done seq_cst, align 4
  %want64 = sub i64 %nthreads, 1
  %nw64 = sext i32 %nw to i64
  %lt = icmp slt i64 %want64, %nw64
  %slots64 = select i1 %lt, i64 %want64, i64 %nw64
  %slots32 = trunc i64 %slots64 to i32
  store atomic i32 %slots32, i32* @slots seq_cst, align 4
  store atomic i64 %hi, i64* @next seq_cst, align 8
  store atomic i32 %g1, i32* @gen seq_cst, align 4
  %sl = load atomic i32, i32* @sleepers seq_cst, align 4
  %anyasleep = icmp sgt i32 %sl, 0
  br i1 %anyasleep, label %wakeall, label %work
wakeall:
  call void @futex_wake(i32* @gen, i32 %slots32)
  br label %work
work:
  call void @run_tasks()
  store i64 0, i64* %ip, align 8
  br label %wait
wait:
  %d = load atomic i32, i32* @done seq_cst, align 4
  %d64 = zext i32 %d to i64
  %fin = icmp eq i64 %d64, %n
  br i1 %fin, label %finish, label %waitmore
waitmore:
  %i = load i64, i64* %ip, align 8
  %lim = load atomic i64, i64* @waitspin monotonic, align 8
  %spinning = icmp ult i64 %i, %lim
  br i1 %spinning, label %dopause, label %sleep
dopause:
  call void @pause()
  %i1 = add i64 %i, 1
  store i64 %i1, i64* %ip, align 8
  br label %wait
sleep:
  call void @futex_wait(i32* @done, i32 %d)
  br label %wait
finish:
  store atomic i32 0, i32* @lock seq_cst, align 4
  ret void
}}

; One block of a product: row t of the i64 table at ctx holds absjit_xxgemm's arguments
; (kind, transa, transb, m, n, k, alpha*, a*, lda, b*, ldb, beta*, c*, ldc).
define internal void @gemm_task(i64 %t, i64 %ctx) {{
entry:
  %base = inttoptr i64 %ctx to i64*
  %off = mul i64 %t, 14
  %row = getelementptr i64, i64* %base, i64 %off
  %p0 = getelementptr i64, i64* %row, i64 0
  %v0 = load i64, i64* %p0, align 8
  %p1 = getelementptr i64, i64* %row, i64 1
  %v1 = load i64, i64* %p1, align 8
  %p2 = getelementptr i64, i64* %row, i64 2
  %v2 = load i64, i64* %p2, align 8
  %p3 = getelementptr i64, i64* %row, i64 3
  %v3 = load i64, i64* %p3, align 8
  %p4 = getelementptr i64, i64* %row, i64 4
  %v4 = load i64, i64* %p4, align 8
  %p5 = getelementptr i64, i64* %row, i64 5
  %v5 = load i64, i64* %p5, align 8
  %p6 = getelementptr i64, i64* %row, i64 6
  %v6 = load i64, i64* %p6, align 8
  %p7 = getelementptr i64, i64* %row, i64 7
  %v7 = load i64, i64* %p7, align 8
  %p8 = getelementptr i64, i64* %row, i64 8
  %v8 = load i64, i64* %p8, align 8
  %p9 = getelementptr i64, i64* %row, i64 9
  %v9 = load i64, i64* %p9, align 8
  %p10 = getelementptr i64, i64* %row, i64 10
  %v10 = load i64, i64* %p10, align 8
  %p11 = getelementptr i64, i64* %row, i64 11
  %v11 = load i64, i64* %p11, align 8
  %p12 = getelementptr i64, i64* %row, i64 12
  %v12 = load i64, i64* %p12, align 8
  %p13 = getelementptr i64, i64* %row, i64 13
  %v13 = load i64, i64* %p13, align 8
  %kind = trunc i64 %v0 to i8
  %ta = trunc i64 %v1 to i8
  %tb = trunc i64 %v2 to i8
  %alpha = inttoptr i64 %v6 to i8*
  %a = inttoptr i64 %v7 to i8*
  %b = inttoptr i64 %v9 to i8*
  %beta = inttoptr i64 %v11 to i8*
  %cc = inttoptr i64 %v12 to i8*
  %slot = call i64 @gemm_slot(i8 %kind, i8 %ta)
  %gp = getelementptr [8 x i64], [8 x i64]* @gemm64, i64 0, i64 %slot
  %g = load atomic i64, i64* %gp monotonic, align 8
  %use64 = icmp ne i64 %g, 0
  br i1 %use64, label %ilp64, label %numba
numba:
  %fa = load i64, i64* @xxgemm, align 8
  %fp = inttoptr i64 %fa to i32 (i8, i8, i8, i64, i64, i64, i8*, i8*, i64, i8*, i64, i8*, i8*, i64)*
  %r = call i32 %fp(i8 %kind, i8 %ta, i8 %tb, i64 %v3, i64 %v4, i64 %v5, i8* %alpha, i8* %a, i64 %v8, i8* %b, i64 %v10, i8* %beta, i8* %cc, i64 %v13)
  ret void
ilp64:
  ; Fortran ?gemm_ with 64-bit integers, every argument by reference: the row's own
  ; int64 fields (the transpose letters are their low bytes; the pool runs only on
  ; little-endian machines), and the character arguments' two hidden lengths
  %pta = bitcast i64* %p1 to i8*
  %ptb = bitcast i64* %p2 to i8*
  %gf = inttoptr i64 %g to void (i8*, i8*, i64*, i64*, i64*, i8*, i8*, i64*, i8*, i64*, i8*, i8*, i64*, i64, i64)*
  call void %gf(i8* %pta, i8* %ptb, i64* %p3, i64* %p4, i64* %p5, i8* %alpha, i8* %a, i64* %p8, i8* %b, i64* %p10, i8* %beta, i8* %cc, i64* %p13, i64 1, i64 1)
  ret void
}}

; The @gemm64 slot of a block: its kind (s d c z) times two, plus one when the first
; operand is transposed.
define internal i64 @gemm_slot(i8 %kind, i8 %ta) {{
entry:
  %isd = icmp eq i8 %kind, 100
  %isc = icmp eq i8 %kind, 99
  %isz = icmp eq i8 %kind, 122
  %k1 = select i1 %isd, i64 1, i64 0
  %k2 = select i1 %isc, i64 2, i64 %k1
  %k3 = select i1 %isz, i64 3, i64 %k2
  %t = icmp eq i8 %ta, 116
  %t64 = zext i1 %t to i64
  %k6 = shl i64 %k3, 1
  %slot = or i64 %k6, %t64
  ret i64 %slot
}}

; Route blocks of a kind and first-operand layout (@gemm_slot) to an ILP64 Fortran
; gemm (fn), or back to absjit_xxgemm (fn = 0).
; absjit_xxgemm's address (:func:`.lapack_symbols.ensure_gemm`), set once it is built
define void @absjit_pool_set_xxgemm(i64 %fn) {{
entry:
  store atomic i64 %fn, i64* @xxgemm seq_cst, align 8
  ret void
}}

define void @absjit_pool_set_gemm64(i64 %slot, i64 %fn) {{
entry:
  %p = getelementptr [8 x i64], [8 x i64]* @gemm64, i64 0, i64 %slot
  store atomic i64 %fn, i64* %p seq_cst, align 8
  ret void
}}

define void @absjit_pool_gemm(i64* %table, i64 %ntasks, i64 %nthreads) {{
entry:
  %c = ptrtoint i64* %table to i64
  %f = ptrtoint void (i64, i64)* @gemm_task to i64
  call void @absjit_pool_run(i64 %f, i64 %c, i64 %ntasks, i64 %nthreads)
  ret void
}}

; A loop of n iterations cut into tasks: at most {loop_tasks} per thread and n in all,
; on the loop thread count. ctx starts with two i64 fields, written here: n and the
; task count (task t runs iterations [t * n / tasks, (t + 1) * n / tasks)).
define void @absjit_pool_for(i64 %f, i64* %ctx, i64 %n) {{
entry:
  %lt = load atomic i64, i64* @loopthreads monotonic, align 8
  %want = mul i64 %lt, {loop_tasks}
  %fewer = icmp slt i64 %n, %want
  %nt0 = select i1 %fewer, i64 %n, i64 %want
  %none = icmp slt i64 %nt0, 1
  %nt = select i1 %none, i64 1, i64 %nt0
  store i64 %n, i64* %ctx, align 8
  %p1 = getelementptr i64, i64* %ctx, i64 1
  store i64 %nt, i64* %p1, align 8
  %c = ptrtoint i64* %ctx to i64
  call void @absjit_pool_run(i64 %f, i64 %c, i64 %nt, i64 %lt)
  ret void
}}

define void @absjit_pool_set_keep_off(i32 %on) {{
entry:
  store atomic i32 %on, i32* @keepoff seq_cst, align 4
  ret void
}}

define void @absjit_pool_set_loop_threads(i64 %n) {{
entry:
  store atomic i64 %n, i64* @loopthreads seq_cst, align 8
  ret void
}}

define void @absjit_pool_set_threads(i64 %n) {{
entry:
  store atomic i64 %n, i64* @maxthreads seq_cst, align 8
  ret void
}}

define void @absjit_pool_configure(i32 %nworkers, i64 %spin, i64 %waitspin, i64 %xxgemm,
                                   [16 x i64]* %allowed) {{
entry:
  store atomic i32 %nworkers, i32* @nworkers seq_cst, align 4
  store atomic i64 %spin, i64* @spin seq_cst, align 8
  store atomic i64 %waitspin, i64* @waitspin seq_cst, align 8
  store atomic i64 %xxgemm, i64* @xxgemm seq_cst, align 8
  %all = load [16 x i64], [16 x i64]* %allowed, align 8
  store [16 x i64] %all, [16 x i64]* @allowed, align 8
  ret void
}}
"""


def _allowed_cpus():
    """The cores this process may run on (where workers may be pinned)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _build():
    """Compile the pool's IR, register ``absjit_pool_gemm`` and ``absjit_pool_run``
    with LLVM's symbol table, and configure it."""
    global _engine, _set_threads, _set_loop_threads, _set_keep_off
    import llvmlite.binding as llvm
    from numba.core import config as numba_config

    from ..kernels.lapack_symbols import gemm_address

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    m = _machine()
    text = _IR.format(sys_futex=_SYS_FUTEX[m], pause=_PAUSE[m], pause_decl=_PAUSE_DECL[m],
                      loop_tasks=LOOP_TASKS)
    mod = llvm.parse_assembly(text)
    mod.verify()
    target = llvm.Target.from_default_triple()
    tm = target.create_target_machine(opt=2, codemodel="jitdefault")
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    for name in ("absjit_pool_gemm", "absjit_pool_run", "absjit_pool_for",
                 "absjit_pool_configure", "absjit_pool_set_threads",
                 "absjit_pool_set_loop_threads", "absjit_pool_set_keep_off",
                 "absjit_pool_set_gemm64", "absjit_pool_set_xxgemm"):
        _addresses[name] = engine.get_function_address(name)
        llvm.add_symbol(name, _addresses[name])
    cores = max(1, int(numba_config.NUMBA_NUM_THREADS))
    nworkers = 2 * cores - 1  # up to twice the threads on a busy machine (:mod:`.threads`)
    mask = (ctypes.c_uint64 * 16)()
    for cpu in _allowed_cpus():
        if cpu < 1024:
            mask[cpu // 64] |= 1 << (cpu % 64)
    configure = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64,
                                 ctypes.c_int64, ctypes.c_void_p)(
        _addresses["absjit_pool_configure"])
    # absjit_xxgemm, if a product was prepared already (else ensure_gemm sets it when
    # it builds it: binding SciPy's BLAS imports scipy.linalg, which loops alone do
    # not need)
    configure(nworkers, SPIN, WAIT_SPIN, gemm_address() or 0, ctypes.addressof(mask))
    _set_threads = ctypes.CFUNCTYPE(None, ctypes.c_int64)(
        _addresses["absjit_pool_set_threads"])
    _set_threads(cores)
    _set_loop_threads = ctypes.CFUNCTYPE(None, ctypes.c_int64)(
        _addresses["absjit_pool_set_loop_threads"])
    _set_loop_threads(int(_loop_threads or cores))
    _set_keep_off = ctypes.CFUNCTYPE(None, ctypes.c_int32)(
        _addresses["absjit_pool_set_keep_off"])
    _set_keep_off(int(bool(_keep_off)))
    _engine = engine
    if gemm_address():  # built meanwhile, by a thread that found no pool to tell
        set_xxgemm(gemm_address())


_set_threads = None
_threads = None  # the count last set
_set_loop_threads = None
_loop_threads = None  # the loops' count last set
_set_keep_off = None
_keep_off = False  # workers kept off the caller's core (a busy machine)


def built() -> bool:
    """Whether this process has built the pool (at its first blocked product)."""
    return _engine is not None


def threads():
    """The thread count products may use (set by :mod:`.threads` before each call),
    or None before the first."""
    return _threads


def set_threads(n: int) -> None:
    """Threads (the caller's included) the next products may use."""
    global _threads
    if n != _threads and ensure():
        _set_threads(int(n))
        _threads = n


def loop_threads():
    """The thread count ``prange``-style loops may use (:func:`set_loop_threads`), or
    None before the first."""
    return _loop_threads


def set_loop_threads(n: int) -> None:
    """Threads (the caller's included) the next loops (:func:`.loop_kernels._pool_for`)
    may use; kept for the pool's build when it is not built yet (a kernel builds it
    when it is compiled or loaded)."""
    global _loop_threads
    with _lock:
        if n != _loop_threads:
            _loop_threads = n
            if _engine is not None:
                _set_loop_threads(int(n))


def set_keep_off(on: bool) -> None:
    """Whether the workers are kept off the caller's core: while other processes keep
    the cores busy (:mod:`.threads` decides); kept for the build when the pool is not
    built yet."""
    global _keep_off
    on = bool(on)
    with _lock:
        if on != _keep_off:
            _keep_off = on
            if _engine is not None:
                _set_keep_off(int(on))


def keep_off() -> bool:
    """Whether the workers are kept off the caller's core now."""
    return _keep_off


def set_xxgemm(address: int) -> None:
    """Where product blocks call ``absjit_xxgemm`` (no-op before the pool is built: it
    asks for the address then)."""
    if _engine is not None:
        ctypes.CFUNCTYPE(None, ctypes.c_int64)(
            _addresses["absjit_pool_set_xxgemm"])(int(address))


def set_gemm64(slot: int, address: int) -> None:
    """Run the product blocks of ``slot`` (kind ``s d c z`` times two, plus one when
    the first operand is transposed) through the ILP64 Fortran gemm at ``address``, or
    through ``absjit_xxgemm`` when it is 0 (:mod:`.block_blas` decides)."""
    if not 0 <= int(slot) < 8:
        raise ValueError(f"slot {slot}: expected 0 to 7 (kind s d c z times two, "
                         f"plus one for a transposed first operand)")
    if ensure():
        ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)(
            _addresses["absjit_pool_set_gemm64"])(int(slot), int(address))


def failure():
    """Why the pool could not be built, or None."""
    return _failed


def ensure() -> bool:
    """Build the pool once per process (before any kernel that calls it is compiled
    or loaded); whether it is usable."""
    global _failed
    if _engine is not None:
        return True
    if _failed is not None or not available():
        return False
    with _lock:
        if _engine is None and _failed is None:
            try:
                _build()
            except Exception as e:  # noqa: BLE001 - fall back to Numba's threads
                _failed = repr(e)
    return _engine is not None


def run_python(fn_address: int, ctx: int, ntasks: int, nthreads: int) -> None:
    """Run a native task function ``void fn(int64 t, int64 ctx)`` for every ``t <
    ntasks`` on the pool (testing and diagnostics)."""
    if not ensure():
        raise RuntimeError(f"the thread pool is not available here ({_failed or sys.platform})")
    run = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                           ctypes.c_int64)(_addresses["absjit_pool_run"])
    run(fn_address, ctx, ntasks, nthreads)
