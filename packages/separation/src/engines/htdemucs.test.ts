import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSeparationEngine } from '../registry.js';
import { separationConformance } from '../testing/conformance.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const mediaDir = path.resolve(repoRoot, '../shared/media');

separationConformance('htdemucs', () => createSeparationEngine('htdemucs'), { mediaDir });
