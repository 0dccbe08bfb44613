/** The DUB_ONNX_* settings checked at a command's start (dub run, serve, worker, doctor: test/cli-run.test.ts). */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '@dub/core';
import { checkOnnxEnv } from './onnx.js';

describe('checkOnnxEnv', () => {
  it('passes the defaults and every documented value; a bad one is a ValidationError naming its variable', () => {
    expect(() => checkOnnxEnv({})).not.toThrow();
    expect(() => checkOnnxEnv({ DUB_ONNX_SPINNING: 'off', DUB_ONNX_OPTIMIZED_GRAPHS: '0', DUB_ONNX_GRAPH_OUTPUTS: 'all', DUB_ONNX_DEQUANT_MATMUL: 'float' })).not.toThrow();
    expect(() => checkOnnxEnv({ DUB_ONNX_SPINNING: 'on', DUB_ONNX_OPTIMIZED_GRAPHS: 'on', DUB_ONNX_GRAPH_OUTPUTS: 'trim', DUB_ONNX_DEQUANT_MATMUL: 'dynamic' })).not.toThrow();
    for (const [name, value] of [['DUB_ONNX_SPINNING', 'maybe'], ['DUB_ONNX_OPTIMIZED_GRAPHS', '2'], ['DUB_ONNX_GRAPH_OUTPUTS', 'some'], ['DUB_ONNX_DEQUANT_MATMUL', 'int4']] as const) {
      let err: unknown;
      try {
        checkOnnxEnv({ [name]: value });
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).message).toMatch(new RegExp(`^${name} must be .*, got "${value}"$`));
      expect((err as ValidationError).field).toBe(name);
    }
  });
});
