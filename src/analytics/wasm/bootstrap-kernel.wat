;; Bootstrap-replicate kernel (docs/scoring.md §5), WebAssembly with 128-bit SIMD.
;;
;; Assembled to bootstrap-kernel.wasm by scripts/assemble-wasm.mjs (the `wabt` package), which
;; `npm run build`, the test setup and the benchmarks run; src/analytics/bootstrap-kernel.ts
;; loads and drives it; where WebAssembly SIMD is missing, bootstrap/scalar-kernel.ts takes over.
;;
;; Two paths, both bit-identical to the scalar definition of a replicate
;;   Σ_{g: D_g > 0} N_g / D_g  /  #{g: D_g > 0},  D_g = Σ_{i∈g} w_i,  N_g = Σ_{i∈g} w_i·x_i
;; (groups in order, each sum left to right, NaN when no group is present):
;; - 0/1 item scores (sumList, variableBlock): N_g and D_g are integer counts, summed exactly in
;;   u8/u16 lanes for 128 replicates at once; only the float steps are done in f64, in the
;;   scalar definition's order.
;; - real item scores (realList, realTile, realTile3): N_g is a chain of f64 multiply-adds in
;;   report order, 14 runs (7 f64x2 accumulators) per pass, or 6 (3 accumulators) for a last
;;   tile of few runs; no FMA, which would round differently.
;;
;; Memory (imported as env.memory, sized by the caller and never grown) — byte addresses; the
;; same numbers are the constants of bootstrap-kernel-wasm.ts and the exported globals below:
;;   0      ACC: 128 u16 lane sums written by sumList (256 bytes, then 16 bytes of padding that
;;          the 4-lane widening loads of the last pair read)
;;   512    PRESENT: f64 per replicate lane, the number of groups with D_g > 0
;;   2048   multiplicity blocks: block j, report i → 128 u8 multiplicities of replicates
;;          128·j … 128·j + 127, report-major inside a block (one report's are contiguous, so a
;;          report's byte offset inside a block is i·128)
;;   above  the per-call tables and lists that the functions' parameters point at.
;; f64 arrays over the 128 lanes are 1024 bytes: 64 f64x2 pairs, walked with a byte offset $k
;; (0, 16, …, 1008); the u16 lane sums of pair k/16 start at ACC + k/4.
(module
  (import "env" "memory" (memory 1))

  ;; The layout above, for the loader's tests.
  (global (export "LANES") i32 (i32.const 128))
  (global (export "ACC_ADDR") i32 (i32.const 0))
  (global (export "PRESENT_ADDR") i32 (i32.const 512))
  (global (export "GROUP_STRIDE") i32 (i32.const 2048))
  (global (export "RUN_STRIDE") i32 (i32.const 1024))
  (global (export "MULTIPLICITY_ADDR") i32 (i32.const 2048))
  (global (export "REAL_TILE") i32 (i32.const 7))
  (global (export "REAL_TILE_BYTES") i32 (i32.const 112))

  ;; sumList(list, count, base, flush): ACC[lane] = Σ over the `count` reports listed at `list`
  ;; (i32 byte offsets i·128, one per report) of the u8 multiplicity at base + offset + lane, for
  ;; the 128 lanes. The sums run in u8 lanes (8 i8x16 accumulators) and are widened into the
  ;; u16 ACC every `flush` reports; the caller picks flush·max(w) ≤ 255 and guarantees every
  ;; lane sum ≤ 65535, so no lane wraps and the sums are exact.
  (func $sumList (export "sumList") (param $list i32) (param $count i32) (param $base i32) (param $flush i32)
    (local $p i32) (local $pend i32) (local $lim i32) (local $addr i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $a4 v128) (local $a5 v128) (local $a6 v128) (local $a7 v128)
    (local $k i32)
    ;; ACC = 0 (256 bytes)
    (loop $zero
      (v128.store (local.get $k) (v128.const i64x2 0 0))
      (br_if $zero (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 256))))
    (local.set $p (local.get $list))
    (local.set $pend (i32.add (local.get $list) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $p) (local.get $pend)))
        ;; lim = min(p + 4·flush, pend): the reports summed before the next widening
        (local.set $lim (i32.add (local.get $p) (i32.shl (local.get $flush) (i32.const 2))))
        (local.set $lim
          (select (local.get $pend) (local.get $lim) (i32.gt_u (local.get $lim) (local.get $pend))))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $a4 (v128.const i64x2 0 0))
        (local.set $a5 (v128.const i64x2 0 0))
        (local.set $a6 (v128.const i64x2 0 0))
        (local.set $a7 (v128.const i64x2 0 0))
        ;; One report: its 128 multiplicities added to the 8 accumulators (lanes 16·j …).
        (loop $report
          (local.set $addr (i32.add (i32.load (local.get $p)) (local.get $base)))
          (local.set $a0 (i8x16.add (local.get $a0) (v128.load offset=0 align=1 (local.get $addr))))
          (local.set $a1 (i8x16.add (local.get $a1) (v128.load offset=16 align=1 (local.get $addr))))
          (local.set $a2 (i8x16.add (local.get $a2) (v128.load offset=32 align=1 (local.get $addr))))
          (local.set $a3 (i8x16.add (local.get $a3) (v128.load offset=48 align=1 (local.get $addr))))
          (local.set $a4 (i8x16.add (local.get $a4) (v128.load offset=64 align=1 (local.get $addr))))
          (local.set $a5 (i8x16.add (local.get $a5) (v128.load offset=80 align=1 (local.get $addr))))
          (local.set $a6 (i8x16.add (local.get $a6) (v128.load offset=96 align=1 (local.get $addr))))
          (local.set $a7 (i8x16.add (local.get $a7) (v128.load offset=112 align=1 (local.get $addr))))
          (br_if $report (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 4))) (local.get $lim))))
        ;; Widen: u16 ACC lanes 16·j … 16·j + 7 += low half of a_j, 16·j + 8 … += high half.
        (v128.store offset=0 (i32.const 0) (i16x8.add (v128.load offset=0 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a0))))
        (v128.store offset=16 (i32.const 0) (i16x8.add (v128.load offset=16 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a0))))
        (v128.store offset=32 (i32.const 0) (i16x8.add (v128.load offset=32 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a1))))
        (v128.store offset=48 (i32.const 0) (i16x8.add (v128.load offset=48 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a1))))
        (v128.store offset=64 (i32.const 0) (i16x8.add (v128.load offset=64 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a2))))
        (v128.store offset=80 (i32.const 0) (i16x8.add (v128.load offset=80 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a2))))
        (v128.store offset=96 (i32.const 0) (i16x8.add (v128.load offset=96 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a3))))
        (v128.store offset=112 (i32.const 0) (i16x8.add (v128.load offset=112 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a3))))
        (v128.store offset=128 (i32.const 0) (i16x8.add (v128.load offset=128 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a4))))
        (v128.store offset=144 (i32.const 0) (i16x8.add (v128.load offset=144 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a4))))
        (v128.store offset=160 (i32.const 0) (i16x8.add (v128.load offset=160 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a5))))
        (v128.store offset=176 (i32.const 0) (i16x8.add (v128.load offset=176 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a5))))
        (v128.store offset=192 (i32.const 0) (i16x8.add (v128.load offset=192 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a6))))
        (v128.store offset=208 (i32.const 0) (i16x8.add (v128.load offset=208 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a6))))
        (v128.store offset=224 (i32.const 0) (i16x8.add (v128.load offset=224 (i32.const 0)) (i16x8.extend_low_i8x16_u (local.get $a7))))
        (v128.store offset=240 (i32.const 0) (i16x8.add (v128.load offset=240 (i32.const 0)) (i16x8.extend_high_i8x16_u (local.get $a7))))
        (br $chunk))))

  ;; variableBlock(base, G, groupTab, R, runTab, den, out, flush): one block of 128 replicates
  ;; (multiplicities at `base`) of one variable, for R runs whose item scores are all 0 or 1.
  ;; - groupTab: per group g, 8 bytes (list, count) of all its annotated reports. D_g per lane
  ;;   goes to den + g·2048 as f64[128], followed by the mask f64[128] (all ones where D_g > 0);
  ;;   PRESENT counts the groups with D_g > 0.
  ;; - runTab: per (run, group), run-major, 8 bytes (list, code): code ≥ 0 → the list holds the
  ;;   `code` reports scored 1 and N = their sum; code < 0 → it holds the ~code reports scored 0
  ;;   and N = D − their sum (the caller lists whichever value is rarer).
  ;; - out + r·1024: f64[128], Σ_g [D_g > 0] N/D_g in group order, then divided by PRESENT, or
  ;;   NaN where no group is present.
  (func $variableBlock (export "variableBlock")
    (param $base i32) (param $G i32) (param $groupTab i32) (param $R i32) (param $runTab i32)
    (param $den i32) (param $out i32) (param $flush i32)
    (local $g i32) (local $r i32) (local $e i32) (local $code i32) (local $dp i32) (local $op i32)
    (local $k i32)
    (local $s v128) (local $m v128)
    ;; PRESENT = 0
    (loop $zero
      (v128.store offset=512 (local.get $k) (v128.const i64x2 0 0))
      (br_if $zero (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 1024))))

    ;; Per group: D_g and its mask per lane, PRESENT += [D_g > 0].
    (local.set $g (i32.const 0))
    (local.set $dp (local.get $den))
    (block $groupsDone
      (loop $group
        (br_if $groupsDone (i32.ge_s (local.get $g) (local.get $G)))
        (local.set $e (i32.add (local.get $groupTab) (i32.shl (local.get $g) (i32.const 3))))
        (call $sumList (i32.load (local.get $e)) (i32.load offset=4 (local.get $e)) (local.get $base) (local.get $flush))
        (local.set $k (i32.const 0))
        (loop $pair
          (local.set $s (f64x2.convert_low_i32x4_s
            (v128.load16x4_u (i32.shr_u (local.get $k) (i32.const 2)))))
          (v128.store (i32.add (local.get $dp) (local.get $k)) (local.get $s))
          (local.set $m (f64x2.gt (local.get $s) (v128.const i64x2 0 0)))
          (v128.store offset=1024 (i32.add (local.get $dp) (local.get $k)) (local.get $m))
          (v128.store offset=512 (local.get $k)
            (f64x2.add
              (v128.load offset=512 (local.get $k))
              (v128.and (local.get $m) (v128.const f64x2 1 1))))
          (br_if $pair (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 1024))))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (local.set $dp (i32.add (local.get $dp) (i32.const 2048)))
        (br $group)))

    ;; Per run: the sum over groups of N/D_g, then the replicate.
    (local.set $r (i32.const 0))
    (local.set $e (local.get $runTab))
    (local.set $op (local.get $out))
    (block $runsDone
      (loop $run
        (br_if $runsDone (i32.ge_s (local.get $r) (local.get $R)))
        (local.set $k (i32.const 0))
        (loop $zeroOut
          (v128.store (i32.add (local.get $op) (local.get $k)) (v128.const i64x2 0 0))
          (br_if $zeroOut (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 1024))))
        (local.set $g (i32.const 0))
        (local.set $dp (local.get $den))
        (block $runGroupsDone
          (loop $runGroup
            (br_if $runGroupsDone (i32.ge_s (local.get $g) (local.get $G)))
            (local.set $code (i32.load offset=4 (local.get $e)))
            ;; ACC = the listed reports' sums; the count is code, or ~code for a list of zeros.
            (call $sumList
              (i32.load (local.get $e))
              (select
                (local.get $code)
                (i32.sub (i32.const -1) (local.get $code))
                (i32.ge_s (local.get $code) (i32.const 0)))
              (local.get $base)
              (local.get $flush))
            (local.set $k (i32.const 0))
            (if (i32.lt_s (local.get $code) (i32.const 0))
              (then
                ;; out += ((D − Σ zeros) / D) & mask
                (loop $pairZeros
                  (v128.store (i32.add (local.get $op) (local.get $k))
                    (f64x2.add
                      (v128.load (i32.add (local.get $op) (local.get $k)))
                      (v128.and
                        (f64x2.div
                          (f64x2.sub
                            (v128.load (i32.add (local.get $dp) (local.get $k)))
                            (f64x2.convert_low_i32x4_s
                              (v128.load16x4_u (i32.shr_u (local.get $k) (i32.const 2)))))
                          (v128.load (i32.add (local.get $dp) (local.get $k))))
                        (v128.load offset=1024 (i32.add (local.get $dp) (local.get $k))))))
                  (br_if $pairZeros (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 1024)))))
              (else
                ;; out += (Σ ones / D) & mask
                (loop $pairOnes
                  (v128.store (i32.add (local.get $op) (local.get $k))
                    (f64x2.add
                      (v128.load (i32.add (local.get $op) (local.get $k)))
                      (v128.and
                        (f64x2.div
                          (f64x2.convert_low_i32x4_s
                            (v128.load16x4_u (i32.shr_u (local.get $k) (i32.const 2))))
                          (v128.load (i32.add (local.get $dp) (local.get $k))))
                        (v128.load offset=1024 (i32.add (local.get $dp) (local.get $k))))))
                  (br_if $pairOnes (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 1024))))))
            (local.set $e (i32.add (local.get $e) (i32.const 8)))
            (local.set $g (i32.add (local.get $g) (i32.const 1)))
            (local.set $dp (i32.add (local.get $dp) (i32.const 2048)))
            (br $runGroup)))
        ;; Replicates: sum / PRESENT, the canonical NaN where PRESENT = 0.
        (local.set $k (i32.const 0))
        (loop $score
          (local.set $s (v128.load offset=512 (local.get $k)))
          (v128.store (i32.add (local.get $op) (local.get $k))
            (v128.bitselect
              (v128.const f64x2 nan nan)
              (f64x2.div (v128.load (i32.add (local.get $op) (local.get $k))) (local.get $s))
              (f64x2.eq (local.get $s) (v128.const i64x2 0 0))))
          (br_if $score (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 16))) (i32.const 1024))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (local.set $op (i32.add (local.get $op) (i32.const 1024)))
        (br $run))))

  ;; realList(wbase, G, groupTab, list, den, listStride, denStride) → present: phase 1, for two
  ;; replicates (lanes wbase and wbase + 1 of a multiplicity block), of one variable with real
  ;; item scores; the second replicate's outputs go to list + listStride and den + denStride.
  ;; - wbase + o: the replicate's u8 multiplicity of the report with byte offset o (o = i·128).
  ;; - groupTab: per group g, (list, count) of its annotated reports in segment order.
  ;; Writes at `list` 16-byte pairs (k·112 as i32, 4 unused bytes, w as f64) for the reports
  ;; with w > 0, k the report's position in segment order; per group, at den + 16·g, D_g as
  ;; f64 and then the address where its pairs end (i32). Branch-free: every report's pair is
  ;; written and the pointer moves past it only when w > 0. Returns the numbers of groups with
  ;; D_g > 0 of the two replicates, the second one times 65536.
  (func $realList (export "realList")
    (param $wbase i32) (param $G i32) (param $groupTab i32) (param $list i32) (param $den i32)
    (param $listStride i32) (param $denStride i32) (result i32)
    (local $g i32) (local $q i32) (local $qend i32) (local $p i32) (local $p2 i32) (local $koff i32)
    (local $d i32) (local $d2 i32) (local $present i32) (local $w i32) (local $w2 i32)
    (local.set $p (local.get $list))
    (local.set $p2 (i32.add (local.get $list) (local.get $listStride)))
    (block $groupsDone
      (loop $group
        (br_if $groupsDone (i32.ge_s (local.get $g) (local.get $G)))
        ;; q … qend: the group's report offsets
        (local.set $q (i32.add (local.get $groupTab) (i32.shl (local.get $g) (i32.const 3))))
        (local.set $qend (i32.shl (i32.load offset=4 (local.get $q)) (i32.const 2)))
        (local.set $q (i32.load (local.get $q)))
        (local.set $qend (i32.add (local.get $qend) (local.get $q)))
        (local.set $d (i32.const 0))
        (local.set $d2 (i32.const 0))
        (block $reportsDone
          (loop $report
            (br_if $reportsDone (i32.ge_u (local.get $q) (local.get $qend)))
            (local.set $w (i32.add (local.get $wbase) (i32.load (local.get $q))))
            (local.set $w2 (i32.load8_u offset=1 (local.get $w)))
            (local.set $w (i32.load8_u (local.get $w)))
            (i32.store (local.get $p) (local.get $koff))
            (f64.store offset=8 (local.get $p) (f64.convert_i32_u (local.get $w)))
            (i32.store (local.get $p2) (local.get $koff))
            (f64.store offset=8 (local.get $p2) (f64.convert_i32_u (local.get $w2)))
            (local.set $d (i32.add (local.get $d) (local.get $w)))
            (local.set $d2 (i32.add (local.get $d2) (local.get $w2)))
            (local.set $p (i32.add (local.get $p) (i32.shl (i32.ne (local.get $w) (i32.const 0)) (i32.const 4))))
            (local.set $p2 (i32.add (local.get $p2) (i32.shl (i32.ne (local.get $w2) (i32.const 0)) (i32.const 4))))
            (local.set $koff (i32.add (local.get $koff) (i32.const 112)))
            (local.set $q (i32.add (local.get $q) (i32.const 4)))
            (br $report)))
        ;; The group's D and pair-list end, for each replicate.
        (local.set $w (i32.add (local.get $den) (i32.shl (local.get $g) (i32.const 4))))
        (f64.store (local.get $w) (f64.convert_i32_u (local.get $d)))
        (i32.store offset=8 (local.get $w) (local.get $p))
        (local.set $w (i32.add (local.get $w) (local.get $denStride)))
        (f64.store (local.get $w) (f64.convert_i32_u (local.get $d2)))
        (i32.store offset=8 (local.get $w) (local.get $p2))
        (local.set $present
          (i32.add
            (i32.add (local.get $present) (i32.ne (local.get $d) (i32.const 0)))
            (i32.shl (i32.ne (local.get $d2) (i32.const 0)) (i32.const 16))))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $group)))
    (local.get $present))

  ;; realTile(nb, G, list, listStride, den, denStride, X, sums, sumsStride): phase 2, for one
  ;; tile of 14 runs and `nb` replicates whose phase 1 wrote replicate j's pairs at
  ;; list + j·listStride and its denominators at den + j·denStride. X + k·112 holds report k's
  ;; scores of the tile's 14 runs (7 f64x2). Per replicate and group with a non-empty pair list
  ;; (D_g > 0): s = Σ fl(w·x) left to right over its pairs (a report with w = 0 would add ±0,
  ;; which leaves s unchanged, so skipping it changes no bit), then sum[run] += s / D_g, with
  ;; sum = sums + j·sumsStride starting at 0: the scalar definition's operations in its order.
  ;; The tile's scores stay in cache across the nb replicates. Seven accumulators: V8 keeps
  ;; them in registers (eight spill one).
  (func $realTile (export "realTile")
    (param $nb i32) (param $G i32) (param $list i32) (param $listStride i32) (param $den i32)
    (param $denStride i32) (param $X i32) (param $sums i32) (param $sumsStride i32)
    (local $j i32) (local $g i32) (local $p i32) (local $pend i32) (local $q i32) (local $xr i32)
    (local $w v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $a4 v128) (local $a5 v128) (local $a6 v128)
    (block $replicatesDone
      (loop $replicate
        (br_if $replicatesDone (i32.ge_s (local.get $j) (local.get $nb)))
        (v128.store offset=0 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=16 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=32 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=48 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=64 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=80 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=96 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (local.set $p (local.get $list))
        (local.set $q (local.get $den))
        (local.set $g (i32.const 0))
        (block $groupsDone
          (loop $group
            (br_if $groupsDone (i32.ge_s (local.get $g) (local.get $G)))
            (local.set $pend (i32.load offset=8 (local.get $q)))
            (if (i32.ne (local.get $p) (local.get $pend))
              (then
                (local.set $a0 (v128.const i64x2 0 0))
                (local.set $a1 (v128.const i64x2 0 0))
                (local.set $a2 (v128.const i64x2 0 0))
                (local.set $a3 (v128.const i64x2 0 0))
                (local.set $a4 (v128.const i64x2 0 0))
                (local.set $a5 (v128.const i64x2 0 0))
                (local.set $a6 (v128.const i64x2 0 0))
                ;; One pair: a_v += w · x[report][runs 2v, 2v + 1]
                (loop $pair
                  (local.set $xr (i32.add (local.get $X) (i32.load (local.get $p))))
                  (local.set $w (v128.load64_splat offset=8 (local.get $p)))
                  (local.set $a0 (f64x2.add (local.get $a0) (f64x2.mul (local.get $w) (v128.load offset=0 align=8 (local.get $xr)))))
                  (local.set $a1 (f64x2.add (local.get $a1) (f64x2.mul (local.get $w) (v128.load offset=16 align=8 (local.get $xr)))))
                  (local.set $a2 (f64x2.add (local.get $a2) (f64x2.mul (local.get $w) (v128.load offset=32 align=8 (local.get $xr)))))
                  (local.set $a3 (f64x2.add (local.get $a3) (f64x2.mul (local.get $w) (v128.load offset=48 align=8 (local.get $xr)))))
                  (local.set $a4 (f64x2.add (local.get $a4) (f64x2.mul (local.get $w) (v128.load offset=64 align=8 (local.get $xr)))))
                  (local.set $a5 (f64x2.add (local.get $a5) (f64x2.mul (local.get $w) (v128.load offset=80 align=8 (local.get $xr)))))
                  (local.set $a6 (f64x2.add (local.get $a6) (f64x2.mul (local.get $w) (v128.load offset=96 align=8 (local.get $xr)))))
                  (br_if $pair (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 16))) (local.get $pend))))
                ;; sum += a / D_g
                (local.set $w (f64x2.splat (f64.load (local.get $q))))
                (v128.store offset=0 align=8 (local.get $sums) (f64x2.add (v128.load offset=0 align=8 (local.get $sums)) (f64x2.div (local.get $a0) (local.get $w))))
                (v128.store offset=16 align=8 (local.get $sums) (f64x2.add (v128.load offset=16 align=8 (local.get $sums)) (f64x2.div (local.get $a1) (local.get $w))))
                (v128.store offset=32 align=8 (local.get $sums) (f64x2.add (v128.load offset=32 align=8 (local.get $sums)) (f64x2.div (local.get $a2) (local.get $w))))
                (v128.store offset=48 align=8 (local.get $sums) (f64x2.add (v128.load offset=48 align=8 (local.get $sums)) (f64x2.div (local.get $a3) (local.get $w))))
                (v128.store offset=64 align=8 (local.get $sums) (f64x2.add (v128.load offset=64 align=8 (local.get $sums)) (f64x2.div (local.get $a4) (local.get $w))))
                (v128.store offset=80 align=8 (local.get $sums) (f64x2.add (v128.load offset=80 align=8 (local.get $sums)) (f64x2.div (local.get $a5) (local.get $w))))
                (v128.store offset=96 align=8 (local.get $sums) (f64x2.add (v128.load offset=96 align=8 (local.get $sums)) (f64x2.div (local.get $a6) (local.get $w))))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $g (i32.add (local.get $g) (i32.const 1)))
            (br $group)))
        (local.set $list (i32.add (local.get $list) (local.get $listStride)))
        (local.set $den (i32.add (local.get $den) (local.get $denStride)))
        (local.set $sums (i32.add (local.get $sums) (local.get $sumsStride)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $replicate))))

  ;; realTile3: realTile for a last tile of at most 6 runs (3 f64x2 accumulators): the same
  ;; operations, in the same order, on the tile's first 6 runs (sums of the other 8 are not
  ;; written). The pass is load-bound, about 0.44 + 0.21·accumulators ns per pair on the
  ;; benchmark machine, so 3 accumulators cost a little over half of 7. A copy of realTile with
  ;; the accumulators a3–a6 left out: the text format has no macros, and a loop over a variable
  ;; number of accumulators would keep them in memory.
  (func $realTile3 (export "realTile3")
    (param $nb i32) (param $G i32) (param $list i32) (param $listStride i32) (param $den i32)
    (param $denStride i32) (param $X i32) (param $sums i32) (param $sumsStride i32)
    (local $j i32) (local $g i32) (local $p i32) (local $pend i32) (local $q i32) (local $xr i32)
    (local $w v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128)
    (block $replicatesDone
      (loop $replicate
        (br_if $replicatesDone (i32.ge_s (local.get $j) (local.get $nb)))
        (v128.store offset=0 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=16 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (v128.store offset=32 align=8 (local.get $sums) (v128.const i64x2 0 0))
        (local.set $p (local.get $list))
        (local.set $q (local.get $den))
        (local.set $g (i32.const 0))
        (block $groupsDone
          (loop $group
            (br_if $groupsDone (i32.ge_s (local.get $g) (local.get $G)))
            (local.set $pend (i32.load offset=8 (local.get $q)))
            (if (i32.ne (local.get $p) (local.get $pend))
              (then
                (local.set $a0 (v128.const i64x2 0 0))
                (local.set $a1 (v128.const i64x2 0 0))
                (local.set $a2 (v128.const i64x2 0 0))
                ;; One pair: a_v += w · x[report][runs 2v, 2v + 1]
                (loop $pair
                  (local.set $xr (i32.add (local.get $X) (i32.load (local.get $p))))
                  (local.set $w (v128.load64_splat offset=8 (local.get $p)))
                  (local.set $a0 (f64x2.add (local.get $a0) (f64x2.mul (local.get $w) (v128.load offset=0 align=8 (local.get $xr)))))
                  (local.set $a1 (f64x2.add (local.get $a1) (f64x2.mul (local.get $w) (v128.load offset=16 align=8 (local.get $xr)))))
                  (local.set $a2 (f64x2.add (local.get $a2) (f64x2.mul (local.get $w) (v128.load offset=32 align=8 (local.get $xr)))))
                  (br_if $pair (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 16))) (local.get $pend))))
                ;; sum += a / D_g
                (local.set $w (f64x2.splat (f64.load (local.get $q))))
                (v128.store offset=0 align=8 (local.get $sums) (f64x2.add (v128.load offset=0 align=8 (local.get $sums)) (f64x2.div (local.get $a0) (local.get $w))))
                (v128.store offset=16 align=8 (local.get $sums) (f64x2.add (v128.load offset=16 align=8 (local.get $sums)) (f64x2.div (local.get $a1) (local.get $w))))
                (v128.store offset=32 align=8 (local.get $sums) (f64x2.add (v128.load offset=32 align=8 (local.get $sums)) (f64x2.div (local.get $a2) (local.get $w))))))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $g (i32.add (local.get $g) (i32.const 1)))
            (br $group)))
        (local.set $list (i32.add (local.get $list) (local.get $listStride)))
        (local.set $den (i32.add (local.get $den) (local.get $denStride)))
        (local.set $sums (i32.add (local.get $sums) (local.get $sumsStride)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $replicate))))

  ;; drawRows(n, rows, state, out, limit): `rows` rows of the multiplicity matrix, each n counts
  ;; (i32, zeroed by the caller) from `out` on: per row n draws of a report index, each counted
  ;; once. The generator is multiplicityRows' (bootstrap/multiplicities.ts), pure-rand 7's
  ;; xoroshiro128plus as four i32 state words (at `state`, in that file's order s01, s00, s11,
  ;; s10; read at the start and written back at the end) and its uniform integer in [0, n): the
  ;; output word of a step, plus 2^31, is used when it is at most `limit` (the largest multiple
  ;; of n below 2^32, minus 1; 2^32 − 1 for n ≤ 2), as that number modulo n; otherwise the next
  ;; step's word is tried.
  (func $drawRows (export "drawRows")
    (param $n i32) (param $rows i32) (param $state i32) (param $out i32) (param $limit i32)
    (local $s00 i32) (local $s01 i32) (local $s10 i32) (local $s11 i32)
    (local $a0 i32) (local $a1 i32) (local $t00 i32) (local $v i32)
    (local $row i32) (local $end i32) (local $k i32) (local $at i32)
    (local.set $s01 (i32.load offset=0 (local.get $state)))
    (local.set $s00 (i32.load offset=4 (local.get $state)))
    (local.set $s11 (i32.load offset=8 (local.get $state)))
    (local.set $s10 (i32.load offset=12 (local.get $state)))
    (local.set $row (local.get $out))
    (local.set $end (i32.add (local.get $out) (i32.shl (i32.mul (local.get $n) (local.get $rows)) (i32.const 2))))
    (block $rowsDone
      (loop $nextRow
        (br_if $rowsDone (i32.ge_u (local.get $row) (local.get $end)))
        (local.set $k (i32.const 0))
        (loop $draw
          (loop $step
            ;; v = (s00 + s10) + 2^31 as an unsigned word; then the state moves on.
            (local.set $v (i32.xor (i32.add (local.get $s00) (local.get $s10)) (i32.const 0x80000000)))
            (local.set $a0 (i32.xor (local.get $s10) (local.get $s00)))
            (local.set $a1 (i32.xor (local.get $s11) (local.get $s01)))
            (local.set $t00 (local.get $s00))
            (local.set $s00
              (i32.xor
                (i32.xor (i32.shl (local.get $t00) (i32.const 24)) (i32.shr_u (local.get $s01) (i32.const 8)))
                (i32.xor (local.get $a0) (i32.shl (local.get $a0) (i32.const 16)))))
            (local.set $s01
              (i32.xor
                (i32.xor (i32.shl (local.get $s01) (i32.const 24)) (i32.shr_u (local.get $t00) (i32.const 8)))
                (i32.xor (local.get $a1) (i32.or (i32.shl (local.get $a1) (i32.const 16)) (i32.shr_u (local.get $a0) (i32.const 16))))))
            (local.set $s10 (i32.xor (i32.shl (local.get $a1) (i32.const 5)) (i32.shr_u (local.get $a0) (i32.const 27))))
            (local.set $s11 (i32.xor (i32.shl (local.get $a0) (i32.const 5)) (i32.shr_u (local.get $a1) (i32.const 27))))
            (br_if $step (i32.gt_u (local.get $v) (local.get $limit))))
          (local.set $at (i32.add (local.get $row) (i32.shl (i32.rem_u (local.get $v) (local.get $n)) (i32.const 2))))
          (i32.store (local.get $at) (i32.add (i32.load (local.get $at)) (i32.const 1)))
          (br_if $draw (i32.lt_u (local.tee $k (i32.add (local.get $k) (i32.const 1))) (local.get $n))))
        (local.set $row (i32.add (local.get $row) (i32.shl (local.get $n) (i32.const 2))))
        (br $nextRow)))
    (i32.store offset=0 (local.get $state) (local.get $s01))
    (i32.store offset=4 (local.get $state) (local.get $s00))
    (i32.store offset=8 (local.get $state) (local.get $s11))
    (i32.store offset=12 (local.get $state) (local.get $s10)))
)
