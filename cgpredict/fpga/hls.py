"""What a user types to build the chosen tiled design: ``#pragma HLS`` lines and the tiled
loop structure (SPEC §5). Pure text from a ``TiledEstimate``."""

from __future__ import annotations

import re

from .device import FPGADevice

_FOR_VAR = re.compile(r"\bfor\s*\(\s*(?:(?:unsigned|signed|const|int|long|short|size_t)\s+)*"
                      r"([A-Za-z_]\w*)\s*=")


def loop_variable(source_line: str, fallback: str) -> str:
    """The index variable of the ``for`` on a source line (``i`` of ``for (int i = 0; ...``)."""
    m = _FOR_VAR.search(source_line)
    return m.group(1) if m else fallback


def tiled_pragmas(est, dev: FPGADevice) -> tuple[str, ...]:
    inner_line = est.loop_lines[-1]
    out = [
        f"#pragma HLS pipeline II={est.ii}            (innermost point loop, line {inner_line})",
    ]
    if est.unroll > 1:
        out.append(f"#pragma HLS unroll factor={est.unroll}         (same loop)")
    if est.reduction_tree:
        out.append(
            f"reduction: add the {est.unroll} unrolled products into a local partial sum "
            f"(an adder tree) and that once into the accumulator; HLS does not reassociate "
            f"floating-point adds itself (II would be {est.unroll} x the adder latency)"
        )
    for b in est.buffers:
        dims = "][".join(str(d) for d in b.dims)
        out.append(
            f"{b.array}_buf[{dims}]{'  x2 (ping-pong)' if b.double else ''}: "
            f"{b.bram36} BRAM36{f' + {b.lut} LUT' if b.lut else ''}"
        )
        if b.partition > 1:
            out.append(
                f"#pragma HLS array_partition variable={b.array}_buf cyclic "
                f"factor={b.partition} dim={b.partition_dim}"
            )
        # beats of one row's burst; an m_axi adapter takes at most 256 per request (AXI4) and
        # splits longer rows itself
        beats = min(max(b.row_bytes // dev.axi_port_bytes, 1), 256)
        lengths = " ".join(
            f"max_{rw}_burst_length={beats}"
            for rw, on in (("read", b.read), ("write", b.written))
            if on
        )
        if dev.axi_ports > 1:
            # the estimate moves every fill at the ports' sum (eq. T2): one array's rows
            # are split over all of them, the pointer passed once per port
            k = dev.axi_ports
            out.append(
                f"#pragma HLS interface m_axi port={b.array}_k offset=slave bundle=gmem_k "
                f"{lengths}    (k = 0..{k - 1}: {b.array} passed as {k} pointers, its tile's "
                f"bursts split over the {k} ports)"
            )
        else:
            out.append(
                f"#pragma HLS interface m_axi port={b.array} offset=slave bundle=gmem0 "
                f"{lengths}"
            )
    if est.double_buffer:
        out.append("#pragma HLS dataflow    (load tile t+1 | compute tile t | store tile t-1)")
    return tuple(out)


def tiled_structure(est, names: dict[int, str]) -> tuple[str, ...]:
    """The tiled loop nest, tile loops outside, point loops inside, buffer fills placed at the
    tile loop after which they change."""
    n = len(est.tiles)
    var = [names.get(k, f"l{k}") for k in range(n)]
    out = []
    ind = ""
    fills_at: dict[int, list[str]] = {}
    for b in est.buffers:
        # filled inside the innermost tile loop whose advance changes it
        k = _fill_level(b, est)
        if b.read and b.written:
            what = f"load {b.array} tile -> {b.array}_buf (bursts); store it back after"
        elif b.written:
            what = f"{b.array}_buf -> store {b.array} tile after the loops below (bursts)"
        else:
            what = f"load {b.array} tile -> {b.array}_buf (bursts)"
        fills_at.setdefault(k, []).append(what)
    out += [f"{what} (once)" for what in fills_at.get(-1, [])]
    for k in range(n):
        t = est.tiles[k]
        out.append(
            f"{ind}for ({var[k]}{var[k]} = 0; {var[k]}{var[k]} < {est.trips[k]:.0f}; "
            f"{var[k]}{var[k]} += {t})   // tile loop, {est.trips[k] / t:.0f} tiles"
        )
        ind += "  "
        out += [f"{ind}{what}" for what in fills_at.get(k, [])]
    for k in range(n):
        t = est.tiles[k]
        note = ""
        if k == n - 1:
            note = f"   // pipelined II={est.ii}, unrolled x{est.unroll}"
        out.append(f"{ind}for ({var[k]} = 0; {var[k]} < {t}; {var[k]}++){note}")
        ind += "  "
    if est.reduction_tree:
        out.append(f"{ind}partial = sum of the {est.unroll} unrolled products (adder tree)")
        out.append(f"{ind}accumulator += partial")
    else:
        out.append(f"{ind}body on the *_buf buffers")
    return tuple(out)


def _fill_level(b, est) -> int:
    fills = 1.0
    if b.fills <= 1:
        return -1
    for k in range(len(est.tiles)):
        fills *= max(est.trips[k] / est.tiles[k], 1)
        if abs(fills - b.fills) < 0.5:
            return k
    return len(est.tiles) - 1
