/**
 * WebAssembly (SIMD) kernel of the 0/1 bootstrap replicates (docs/scoring.md §5), assembled here
 * from a short instruction listing, so the source of the module is this file and no binary is
 * committed. {@link buildReplicateKernelModule} returns the module bytes; bootstrap-kernel.ts
 * instantiates and drives them.
 *
 * Memory layout the kernel expects (byte addresses):
 * - `ACC_ADDR`: 16 vectors of u16 lane sums written by `sumList` (plus 16 bytes of padding
 *   read by the 4-lane widening loads).
 * - `PRESENT_ADDR`: f64 per replicate lane, number of groups with D_g > 0.
 * - multiplicity blocks from `MULTIPLICITY_ADDR`: block j, report i → `LANES` u8 multiplicities
 *   of replicates j·LANES … j·LANES + LANES − 1 (report-major inside a block, so one report's
 *   multiplicities in a block are 128 contiguous bytes).
 * - per-call tables and lists anywhere above (see `variableBlock`).
 */

/** Replicates handled per block: 8 i8x16 accumulators. */
export const LANES = 128;
/** u16 lane sums of one list (256 bytes + padding). */
export const ACC_ADDR = 0;
/** f64 per lane: groups present in the replicate. */
export const PRESENT_ADDR = 512;
/** Per group: den f64[LANES] then mask (all-ones where D > 0) f64[LANES]. */
export const GROUP_STRIDE = 2 * LANES * 8;
/** Per run: f64[LANES] score sums, then scores. */
export const RUN_STRIDE = LANES * 8;
/** First multiplicity block. */
export const MULTIPLICITY_ADDR = 2048;

const VECTORS = LANES / 16;
const PAIRS = LANES / 2;

// Opcodes (WebAssembly core spec, SIMD opcodes after the 0xfd prefix).
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const ELSE = 0x05;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const CALL = 0x10;
const SELECT = 0x1b;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I32_LOAD = 0x28;
const F64_LOAD = 0x2b;
const I32_LOAD8_U = 0x2d;
const I32_STORE = 0x36;
const F64_STORE = 0x39;
const I32_NE = 0x47;
const F64_CONVERT_I32_U = 0xb8;
const I32_CONST = 0x41;
const I32_LT_S = 0x48;
const I32_GE_S = 0x4e;
const I32_LT_U = 0x49;
const I32_GT_U = 0x4b;
const I32_GE_U = 0x4f;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_SHL = 0x74;
const VOID = 0x40;
const I32 = 0x7f;
const V128 = 0x7b;

const V128_LOAD = 0x00;
const V128_LOAD16X4_U = 0x04;
const V128_LOAD64_SPLAT = 0x0a;
const V128_STORE = 0x0b;
const V128_CONST = 0x0c;
const F64X2_SPLAT = 0x14;
const F64X2_EQ = 0x47;
const F64X2_GT = 0x4a;
const V128_AND = 0x4e;
const V128_BITSELECT = 0x52;
const I8X16_ADD = 0x6e;
const I16X8_EXTEND_LOW_I8X16_U = 0x89;
const I16X8_EXTEND_HIGH_I8X16_U = 0x8a;
const I16X8_ADD = 0x8e;
const F64X2_ADD = 0xf0;
const F64X2_SUB = 0xf1;
const F64X2_MUL = 0xf2;
const F64X2_DIV = 0xf3;
const F64X2_CONVERT_LOW_I32X4_S = 0xfe;

function uleb(v: number, out: number[]): void {
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
}

function sleb(v: number, out: number[]): void {
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return;
    }
    out.push(byte | 0x80);
  }
}

/** Instruction stream of one function body. */
class Code {
  readonly bytes: number[] = [];
  op(...ops: number[]): this {
    this.bytes.push(...ops);
    return this;
  }
  get(i: number): this {
    this.bytes.push(LOCAL_GET);
    uleb(i, this.bytes);
    return this;
  }
  set(i: number): this {
    this.bytes.push(LOCAL_SET);
    uleb(i, this.bytes);
    return this;
  }
  tee(i: number): this {
    this.bytes.push(LOCAL_TEE);
    uleb(i, this.bytes);
    return this;
  }
  i32(v: number): this {
    this.bytes.push(I32_CONST);
    sleb(v, this.bytes);
    return this;
  }
  i32Load(offset = 0): this {
    this.bytes.push(I32_LOAD, 2);
    uleb(offset, this.bytes);
    return this;
  }
  /** Scalar memory access (opcode, alignment hint 2^align, constant offset). */
  mem(op: number, align: number, offset = 0): this {
    this.bytes.push(op, align);
    uleb(offset, this.bytes);
    return this;
  }
  simd(op: number): this {
    this.bytes.push(0xfd);
    uleb(op, this.bytes);
    return this;
  }
  /** SIMD memory access with alignment hint 2^align and a constant offset. */
  simdMem(op: number, offset: number, align = 0): this {
    this.simd(op);
    this.bytes.push(align);
    uleb(offset, this.bytes);
    return this;
  }
  v128(bytes: ArrayLike<number>): this {
    this.simd(V128_CONST);
    for (let k = 0; k < 16; k++) this.bytes.push(bytes[k]! & 0xff);
    return this;
  }
  zero(): this {
    return this.v128(new Uint8Array(16));
  }
  f64x2(v: number): this {
    return this.v128(new Uint8Array(new Float64Array([v, v]).buffer));
  }
  call(f: number): this {
    this.bytes.push(CALL);
    uleb(f, this.bytes);
    return this;
  }
}

function section(id: number, payload: number[], out: number[]): void {
  out.push(id);
  uleb(payload.length, out);
  out.push(...payload);
}

function vec(items: number[][]): number[] {
  const out: number[] = [];
  uleb(items.length, out);
  for (const it of items) out.push(...it);
  return out;
}

function name(s: string): number[] {
  const out: number[] = [];
  uleb(s.length, out);
  for (const ch of s) out.push(ch.charCodeAt(0));
  return out;
}

/**
 * sumList(list, count, base, flush): for the `count` byte offsets at `list` (i32 each, report
 * i → i·LANES), the lane-wise sums of the LANES u8 multiplicities at base + offset, written as
 * u16 to ACC. Accumulates in u8 lanes and widens every `flush` reports; the caller chooses
 * flush · max(w) ≤ 255 and guarantees every lane sum ≤ 65535, so all sums are exact.
 */
function sumListBody(): number[] {
  const [LIST, COUNT, BASE, FLUSH, P, PEND, LIM, ADDR] = [0, 1, 2, 3, 4, 5, 6, 7];
  const A0 = 8;
  const c = new Code();
  for (let k = 0; k < 2 * VECTORS; k++) c.i32(0).zero().simdMem(V128_STORE, ACC_ADDR + 16 * k, 4);
  c.get(LIST).set(P);
  c.get(LIST).get(COUNT).i32(2).op(I32_SHL).op(I32_ADD).set(PEND);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(P).get(PEND).op(I32_GE_U).op(BR_IF, 1);
  // lim = min(p + 4·flush, pend)
  c.get(P).get(FLUSH).i32(2).op(I32_SHL).op(I32_ADD).set(LIM);
  c.get(PEND).get(LIM).get(LIM).get(PEND).op(I32_GT_U).op(SELECT).set(LIM);
  for (let j = 0; j < VECTORS; j++) c.zero().set(A0 + j);
  c.op(LOOP, VOID);
  c.get(P).i32Load().get(BASE).op(I32_ADD).set(ADDR);
  for (let j = 0; j < VECTORS; j++) {
    c.get(A0 + j).get(ADDR).simdMem(V128_LOAD, 16 * j).simd(I8X16_ADD).set(A0 + j);
  }
  c.get(P).i32(4).op(I32_ADD).tee(P).get(LIM).op(I32_LT_U).op(BR_IF, 0);
  c.op(END);
  for (let j = 0; j < VECTORS; j++) {
    for (const [ext, off] of [
      [I16X8_EXTEND_LOW_I8X16_U, 32 * j],
      [I16X8_EXTEND_HIGH_I8X16_U, 32 * j + 16],
    ] as const) {
      c.i32(0);
      c.i32(0).simdMem(V128_LOAD, ACC_ADDR + off, 4);
      c.get(A0 + j).simd(ext).simd(I16X8_ADD);
      c.simdMem(V128_STORE, ACC_ADDR + off, 4);
    }
  }
  c.op(BR, 0).op(END).op(END);
  c.op(END);
  const locals = vec([
    [4, I32],
    [VECTORS, V128],
  ]);
  return [...locals, ...c.bytes];
}

/**
 * variableBlock(base, G, groupTab, R, runTab, den, out, flush): one block of LANES replicates of
 * one variable for R runs of 0/1 item scores.
 * - groupTab: per group g, (list, count) of all its annotated reports → D_g per lane, stored
 *   as f64 at den + g·GROUP_STRIDE with the mask D_g > 0 after it; PRESENT counts groups.
 * - runTab: per (run, group), run-major, (list, code): code ≥ 0 → the list holds the `code`
 *   reports scored 1 and N = Σ; code < 0 → it holds the ~code reports scored 0 and N = D − Σ.
 * - out + r·RUN_STRIDE: Σ_g [D_g > 0] N/D_g in group order, then that sum / present, or NaN
 *   when no group is present (the scalar definition, operation for operation).
 */
function variableBlockBody(): number[] {
  const [BASE, G, GTAB, R, RTAB, DEN, OUT, FLUSH] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [GI, RI, E, CNT, DP, OP] = [8, 9, 10, 11, 12, 13];
  const [S, M] = [14, 15];
  const c = new Code();
  const accPair = (p: number): void => {
    c.i32(0).simdMem(V128_LOAD16X4_U, ACC_ADDR + 4 * p, 0).simd(F64X2_CONVERT_LOW_I32X4_S);
  };
  for (let p = 0; p < PAIRS; p++) c.i32(0).zero().simdMem(V128_STORE, PRESENT_ADDR + 16 * p, 4);

  // Denominators and masks per group.
  c.i32(0).set(GI).get(DEN).set(DP);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(GI).get(G).op(I32_GE_S).op(BR_IF, 1);
  c.get(GTAB).get(GI).i32(3).op(I32_SHL).op(I32_ADD).tee(E).i32Load(0);
  c.get(E).i32Load(4).get(BASE).get(FLUSH).call(0);
  for (let p = 0; p < PAIRS; p++) {
    c.get(DP);
    accPair(p);
    c.tee(S).simdMem(V128_STORE, 16 * p, 4);
    c.get(DP).get(S).zero().simd(F64X2_GT).tee(M).simdMem(V128_STORE, LANES * 8 + 16 * p, 4);
    c.i32(0);
    c.i32(0).simdMem(V128_LOAD, PRESENT_ADDR + 16 * p, 4);
    c.get(M).f64x2(1).simd(V128_AND).simd(F64X2_ADD);
    c.simdMem(V128_STORE, PRESENT_ADDR + 16 * p, 4);
  }
  c.get(GI).i32(1).op(I32_ADD).set(GI);
  c.get(DP).i32(GROUP_STRIDE).op(I32_ADD).set(DP);
  c.op(BR, 0).op(END).op(END);

  // Runs.
  c.i32(0).set(RI).get(RTAB).set(E).get(OUT).set(OP);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(RI).get(R).op(I32_GE_S).op(BR_IF, 1);
  for (let p = 0; p < PAIRS; p++) c.get(OP).zero().simdMem(V128_STORE, 16 * p, 4);
  c.i32(0).set(GI).get(DEN).set(DP);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(GI).get(G).op(I32_GE_S).op(BR_IF, 1);
  c.get(E).i32Load(4).set(CNT);
  c.get(E).i32Load(0);
  // count = code ≥ 0 ? code : ~code
  c.get(CNT).i32(-1).get(CNT).op(I32_SUB).get(CNT).i32(0).op(I32_GE_S).op(SELECT);
  c.get(BASE).get(FLUSH).call(0);
  c.get(CNT).i32(0).op(I32_LT_S).op(IF, VOID);
  for (const complement of [true, false]) {
    if (!complement) c.op(ELSE);
    for (let p = 0; p < PAIRS; p++) {
      c.get(OP);
      c.get(OP).simdMem(V128_LOAD, 16 * p, 4);
      if (complement) c.get(DP).simdMem(V128_LOAD, 16 * p, 4);
      accPair(p);
      if (complement) c.simd(F64X2_SUB);
      c.get(DP).simdMem(V128_LOAD, 16 * p, 4).simd(F64X2_DIV);
      c.get(DP).simdMem(V128_LOAD, LANES * 8 + 16 * p, 4).simd(V128_AND);
      c.simd(F64X2_ADD).simdMem(V128_STORE, 16 * p, 4);
    }
  }
  c.op(END);
  c.get(E).i32(8).op(I32_ADD).set(E);
  c.get(GI).i32(1).op(I32_ADD).set(GI);
  c.get(DP).i32(GROUP_STRIDE).op(I32_ADD).set(DP);
  c.op(BR, 0).op(END).op(END);
  // Scores: sum / present, canonical NaN where present = 0.
  for (let p = 0; p < PAIRS; p++) {
    c.get(OP);
    c.f64x2(NaN);
    c.get(OP).simdMem(V128_LOAD, 16 * p, 4);
    c.i32(0).simdMem(V128_LOAD, PRESENT_ADDR + 16 * p, 4).tee(S).simd(F64X2_DIV);
    c.get(S).zero().simd(F64X2_EQ).simd(V128_BITSELECT);
    c.simdMem(V128_STORE, 16 * p, 4);
  }
  c.get(RI).i32(1).op(I32_ADD).set(RI);
  c.get(OP).i32(RUN_STRIDE).op(I32_ADD).set(OP);
  c.op(BR, 0).op(END).op(END);
  c.op(END);
  const locals = vec([
    [6, I32],
    [2, V128],
  ]);
  return [...locals, ...c.bytes];
}

/** f64x2 vectors of runs per tile of {@link realTileBody}: 2 · REAL_TILE runs at a time. */
export const REAL_TILE = 7;
/** Bytes of one report's scores in a tile (2 · REAL_TILE f64). */
export const REAL_TILE_BYTES = 16 * REAL_TILE;

/**
 * realList(wbase, G, groupTab, list, den, listStride, denStride) → present: phase 1 of two
 * replicates (lanes wbase and wbase + 1 of a multiplicity block) of one variable with
 * real-valued item scores; the second replicate's tables follow at + listStride / + denStride.
 * - wbase + o: the replicate's u8 multiplicity of the report with byte offset o (o = i·LANES,
 *   as in the group lists of `variableBlock`).
 * - groupTab: per group g, (list, count) of its annotated reports in segment order.
 * Writes at `list` the pairs (k·REAL_TILE_BYTES as i32, 4 bytes unused, w as f64), 16 bytes
 * each, of the reports with w > 0, k their position in segment order, and per group at den + 16·g: D_g as f64, then the end of its pairs (i32).
 * Returns the numbers of groups with D_g > 0 of the two replicates, the second one · 65536.
 */
function realListBody(): number[] {
  const [WBASE, G, GTAB, LIST, DEN, LSTRIDE, DSTRIDE] = [0, 1, 2, 3, 4, 5, 6];
  const [GI, Q, QEND, P, P2, KOFF, D, D2, PRESENT, W, W2] = [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
  const c = new Code();
  c.get(LIST).set(P).get(LIST).get(LSTRIDE).op(I32_ADD).set(P2);
  c.i32(0).set(KOFF).i32(0).set(PRESENT).i32(0).set(GI);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(GI).get(G).op(I32_GE_S).op(BR_IF, 1);
  // q = groupTab[g].list, qend = q + 4 · groupTab[g].count
  c.get(GTAB).get(GI).i32(3).op(I32_SHL).op(I32_ADD).tee(Q).i32Load(4).i32(2).op(I32_SHL).get(Q).i32Load(0).tee(Q).op(I32_ADD).set(QEND);
  c.i32(0).set(D).i32(0).set(D2);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(Q).get(QEND).op(I32_GE_U).op(BR_IF, 1);
  // Branch-free: w = mem8[wbase + offset]; list[p] = (koff, w); p += 8 when w ≠ 0.
  c.get(WBASE).get(Q).i32Load(0).op(I32_ADD).tee(W).mem(I32_LOAD8_U, 0, 1).set(W2);
  c.get(W).mem(I32_LOAD8_U, 0, 0).set(W);
  c.get(P).get(KOFF).mem(I32_STORE, 2, 0);
  c.get(P).get(W).op(F64_CONVERT_I32_U).mem(F64_STORE, 3, 8);
  c.get(P2).get(KOFF).mem(I32_STORE, 2, 0);
  c.get(P2).get(W2).op(F64_CONVERT_I32_U).mem(F64_STORE, 3, 8);
  c.get(D).get(W).op(I32_ADD).set(D);
  c.get(D2).get(W2).op(I32_ADD).set(D2);
  c.get(P).get(W).i32(0).op(I32_NE).i32(4).op(I32_SHL).op(I32_ADD).set(P);
  c.get(P2).get(W2).i32(0).op(I32_NE).i32(4).op(I32_SHL).op(I32_ADD).set(P2);
  c.get(KOFF).i32(REAL_TILE_BYTES).op(I32_ADD).set(KOFF);
  c.get(Q).i32(4).op(I32_ADD).set(Q);
  c.op(BR, 0).op(END).op(END);
  c.get(DEN).get(GI).i32(4).op(I32_SHL).op(I32_ADD).tee(W).get(D).op(F64_CONVERT_I32_U).mem(F64_STORE, 3, 0);
  c.get(W).get(P).mem(I32_STORE, 2, 8);
  c.get(W).get(DSTRIDE).op(I32_ADD).tee(W).get(D2).op(F64_CONVERT_I32_U).mem(F64_STORE, 3, 0);
  c.get(W).get(P2).mem(I32_STORE, 2, 8);
  c.get(PRESENT).get(D).i32(0).op(I32_NE).op(I32_ADD).get(D2).i32(0).op(I32_NE).i32(16).op(I32_SHL).op(I32_ADD).set(PRESENT);
  c.get(GI).i32(1).op(I32_ADD).set(GI);
  c.op(BR, 0).op(END).op(END);
  c.get(PRESENT);
  c.op(END);
  const locals = vec([[11, I32]]);
  return [...locals, ...c.bytes];
}

/**
 * realTile(nb, G, list, listStride, den, denStride, X, sums, sumsStride): phase 2 for one tile
 * of 2 · REAL_TILE runs and `nb` replicates whose phase 1 wrote replicate j's pairs at
 * list + j·listStride and its denominators at den + j·denStride. X + k·REAL_TILE_BYTES holds
 * report k's scores of the tile's runs. Per replicate and group with D_g > 0 (a non-empty pair
 * list), s = Σ fl(w·x) left to right over its pairs (a report with w = 0 would add ±0, which
 * leaves s unchanged, so skipping it changes no bit), then sum[run] += s / D_g, with
 * sum = sums + j·sumsStride starting at 0: the scalar definition's operations in its order.
 * The tile's scores (n · REAL_TILE_BYTES) stay in cache across the `nb` replicates.
 */
function realTileBody(): number[] {
  const [NB, G, LIST, LSTRIDE, DEN, DSTRIDE, X, SUMS, SSTRIDE] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const [J, GI, P, PEND, Q, XR] = [9, 10, 11, 12, 13, 14];
  const WV = 15;
  const A0 = 16;
  const TILE = REAL_TILE;
  const c = new Code();
  c.i32(0).set(J);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(J).get(NB).op(I32_GE_S).op(BR_IF, 1);
  for (let v = 0; v < TILE; v++) c.get(SUMS).zero().simdMem(V128_STORE, 16 * v, 3);
  c.get(LIST).set(P).get(DEN).set(Q).i32(0).set(GI);
  c.op(BLOCK, VOID).op(LOOP, VOID);
  c.get(GI).get(G).op(I32_GE_S).op(BR_IF, 1);
  c.get(Q).i32Load(8).set(PEND);
  c.get(P).get(PEND).op(I32_NE).op(IF, VOID);
  for (let v = 0; v < TILE; v++) c.zero().set(A0 + v);
  c.op(LOOP, VOID);
  c.get(X).get(P).i32Load(0).op(I32_ADD).set(XR);
  c.get(P).simdMem(V128_LOAD64_SPLAT, 8, 3).set(WV);
  for (let v = 0; v < TILE; v++) {
    c.get(A0 + v).get(WV).get(XR).simdMem(V128_LOAD, 16 * v, 3).simd(F64X2_MUL).simd(F64X2_ADD).set(A0 + v);
  }
  c.get(P).i32(16).op(I32_ADD).tee(P).get(PEND).op(I32_LT_U).op(BR_IF, 0);
  c.op(END);
  c.get(Q).mem(F64_LOAD, 3, 0).simd(F64X2_SPLAT).set(WV);
  for (let v = 0; v < TILE; v++) {
    c.get(SUMS);
    c.get(SUMS).simdMem(V128_LOAD, 16 * v, 3);
    c.get(A0 + v).get(WV).simd(F64X2_DIV).simd(F64X2_ADD);
    c.simdMem(V128_STORE, 16 * v, 3);
  }
  c.op(END);
  c.get(Q).i32(16).op(I32_ADD).set(Q);
  c.get(GI).i32(1).op(I32_ADD).set(GI);
  c.op(BR, 0).op(END).op(END);
  c.get(LIST).get(LSTRIDE).op(I32_ADD).set(LIST);
  c.get(DEN).get(DSTRIDE).op(I32_ADD).set(DEN);
  c.get(SUMS).get(SSTRIDE).op(I32_ADD).set(SUMS);
  c.get(J).i32(1).op(I32_ADD).set(J);
  c.op(BR, 0).op(END).op(END);
  c.op(END);
  const locals = vec([
    [6, I32],
    [1 + TILE, V128],
  ]);
  return [...locals, ...c.bytes];
}

/**
 * Bytes of the replicate-kernel module: imports its memory as `env.memory` (at least one page)
 * and exports `sumList`, `variableBlock`, `realList` and `realTile`. The memory is imported,
 * sized by the caller, and
 * never grown: growing detaches the old ArrayBuffer, which makes V8 add detach checks to every
 * optimised typed-array loop in the process from then on (measured: ~40 % slower).
 */
export function buildReplicateKernelModule(): Uint8Array<ArrayBuffer> {
  const out: number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const fnType = (params: number): number[] => [0x60, params, ...new Array<number>(params).fill(I32), 0];
  section(1, vec([fnType(4), fnType(8), [0x60, 7, ...new Array<number>(7).fill(I32), 1, I32], fnType(9)]), out);
  section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]]), out);
  section(3, vec([[0], [1], [2], [3]]), out);
  section(
    7,
    vec([
      [...name('sumList'), 0x00, 0],
      [...name('variableBlock'), 0x00, 1],
      [...name('realList'), 0x00, 2],
      [...name('realTile'), 0x00, 3],
    ]),
    out,
  );
  const bodies = [sumListBody(), variableBlockBody(), realListBody(), realTileBody()].map((b) => {
    const sized: number[] = [];
    uleb(b.length, sized);
    sized.push(...b);
    return sized;
  });
  section(10, vec(bodies), out);
  return Uint8Array.from(out);
}
