"""A memory prefetch for Numba kernels: ``llvm.prefetch`` as an intrinsic.

The pipelined Poisson-Gibbs kernel (``fast.py``) issues it for the factor records of the
proposals it will test next, so that their random reads overlap each other and the work of the
steps in between. A prefetch changes no value.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, idx):
    """Start loading the cache line of ``arr[idx]`` (1-D) without waiting for it (llvm.prefetch:
    read, keep in all levels). No effect on values; lets independent memory reads overlap."""

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, idx), codegen
