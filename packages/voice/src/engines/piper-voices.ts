/** Default Piper voice per target locale on real hosts (ids in models/manifest.json as `piper-<voice>`). */
export const PIPER_DEFAULT_VOICES: Readonly<Record<string, string>> = Object.freeze({
  'en-US': 'en_US-lessac-medium',
  'es-ES': 'es_ES-davefx-medium',
  'es-MX': 'es_MX-claude-high',
  'fr-FR': 'fr_FR-siwis-medium',
  'de-DE': 'de_DE-thorsten-medium',
  'it-IT': 'it_IT-riccardo-x_low',
  'pt-BR': 'pt_BR-faber-medium',
});
