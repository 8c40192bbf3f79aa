#!/usr/bin/env python3
"""The files of one checkpoint by DLIO's checkpointing rules, written again here (not from railbench's C).

Usage: checkpoint_formula.py H L F V HEADS KV_HEADS TP PP DP ZERO SCALE_DEN
Prints "name bytes" per file, every model rank, for a model of hidden size H, L layers, FFN size F, vocabulary V,
HEADS attention heads of which KV_HEADS key/value heads, TP x PP x DP ranks, ZeRO stage ZERO, at 1/SCALE_DEN.
The preset llama3-8b is: 4096 32 14336 128256 32 8 1 1 8 3 DEN. Used by tests/integration/*checkpoint*.sh.
"""
import sys
h, L, f, V, heads, kvh, tp, pp, dp, z, den = map(int, sys.argv[1:])
kv = h // heads * kvh
P = 2*V*h + L*(2*h + h*(h+2*kv) + h*h + 3*h*f) + h
sf = dp if z == 3 else 1
def layer(i):
    if i in (0, L+1): return [h*V//tp//sf]
    if i == L+2: return [h//sf]
    return [h//sf, h*(h+2*kv)//tp//sf, h*h//tp//sf, h//sf, 2*h*f//tp//sf, h*f//tp//sf]
for r in range(tp*pp*dp):
    s, d, m = (r//tp) % pp, r//(tp*pp), r % (tp*pp)
    n, rem = L//pp, L % pp
    a = s*(n+1)+1 if s < rem else rem*(n+1)+(s-rem)*n+1
    b = a+n if s < rem else a+n-1
    if s == pp-1: b = L+2
    if s == 0: a = 0
    if z == 3:
        print(f"zero_pp_rank_{d}_mp_rank_{m:02d}_model_states", sum(2*sum(layer(i)) for i in range(a, b+1))//den)
    elif d == 0:
        if pp == 1:
            print(f"model_{m:02d}_model_states", sum(2*sum(layer(i)) for i in range(a, b+1))//den)
        else:
            for i in range(a, b+1):
                print(f"layer_{i:02d}-model_{m:02d}_model_states", 2*sum(layer(i))//den)
    if z > 0 or d == 0:
        print(f"zero_pp_rank_{d}_mp_rank_{m:02d}_optim_states", 4*3*(P//(tp*pp*dp if z > 0 else tp*pp) + 5*h)//den)
