/**
 * BlazeFace SSD anchors, as MediaPipe's SsdAnchorsCalculator makes them for the face detectors
 * (fixed anchor size, two anchors per layer and cell, consecutive layers of the same stride
 * sharing one grid): full range (256 px input) uses strides [16, 32, 32, 32] -> 16x16x2 + 8x8x6
 * = 896 anchors; short range (128 px) uses [8, 16, 16, 16] -> the same 896 on a finer stride.
 * Anchors are in normalised [0, 1] coordinates of the detector input; the order matches the
 * model's outputs: per layer group, row-major cells, then the anchors of a cell.
 */

export interface Anchor {
  x: number;
  y: number;
}

export interface AnchorLayer {
  /** Cells per row (and per column) of the layer's grid. */
  cells: number;
  /** Anchors per cell. */
  perCell: number;
}

/** Layer groups of a BlazeFace model with input `size` and the given strides. */
export function anchorLayers(size: number, strides: readonly number[]): AnchorLayer[] {
  const layers: AnchorLayer[] = [];
  let i = 0;
  while (i < strides.length) {
    const stride = strides[i];
    let perCell = 0;
    while (i < strides.length && strides[i] === stride) {
      perCell += 2; // aspect ratio 1.0 and the interpolated scale, both square with fixed size
      i++;
    }
    layers.push({ cells: Math.ceil(size / stride), perCell });
  }
  return layers;
}

export function generateAnchors(layers: readonly AnchorLayer[]): Anchor[] {
  const out: Anchor[] = [];
  for (const { cells, perCell } of layers) {
    for (let y = 0; y < cells; y++) {
      for (let x = 0; x < cells; x++) {
        for (let a = 0; a < perCell; a++) out.push({ x: (x + 0.5) / cells, y: (y + 0.5) / cells });
      }
    }
  }
  return out;
}

/** Strides of the two BlazeFace models. */
export const BLAZEFACE_STRIDES: Readonly<Record<128 | 256, readonly number[]>> = Object.freeze({
  128: [8, 16, 16, 16],
  256: [16, 32, 32, 32],
});
