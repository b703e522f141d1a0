"""`python -m tests.benches.trtctx68`: section 3j's TensorRT-LLM rows replayed with each role's
pool at its recipe's free_gpu_memory_fraction and with the cache transceiver's one-at-a-time
transfers per rank on each end (issue 29; dis3trt68's FINDING items 1 and 3-4), before -> after,
by row class. Every 3j row was read before (dis3j67, dis3trt68, trtctx62, trtttft61, trtdis57):
all SHAPED, none held out; section 4 has no TensorRT-LLM row.

DECISION (committed before any row was replayed with the rules)

The two rules follow TensorRT-LLM's code and the recipes, so they land whichever way the figures
move. What is expected, from dis3trt68's measured-rate reading (not from a replay):
(a) Each role's pool at its recipe's fraction (context 0.1-0.85, generation 0.7-0.9 in the
    recipe file; the generator's template 0.80 on both roles of the unmatched rows). The context
    pool bounds admission only through the prompts it holds until their sends end, a bound
    dis3trt68 put at most 0.45 of the pool on 23 of 24 matched low rows: expected to move no
    TTFT but h100 cfg503 c154's (1.77 of the pool: up). The generation pool bounds the seats at
    the I + O reservation: rows whose recipe fraction is below 0.9 may lose seats (TTFT up
    where users per rank exceed them); no TPOT change elsewhere.
(b) One transfer at a time per context rank and per generation rank (or TP server): at the
    measured rates the ends are at most a sixth busy (dis3trt68 item 1), so the wait is a few
    per cent of a transfer; expected: TTFT up by under 5 % on every row but the 8k-prompt B200 /
    H200 rows with TP generation servers (cfg553-class: up to ~20 %), TPOT unchanged.
So the 3j TTFT ratios are expected to rise slightly, the low class (TTFT ratio below 0.75) to
stay low: these rules are not its cause.
"""
