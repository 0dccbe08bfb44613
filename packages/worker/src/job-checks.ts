/**
 * A job is checked on arrival, before its handler runs: its locales must be contract locales for
 * their roles (the source of a prepare-asset or prepare-version, each target). A job that names
 * another (e.g. `xx-XX`, sent by an API front that does not check) fails at once with the
 * contract's `invalid_input` (prepare-asset; version jobs: `unsupported_language_pair`), before
 * any stage, instead of failing later with processing_failed. Whether the engines here serve the
 * pair is the handlers' own check (the pipeline's PairChecker), also before any stage.
 */
import { AssetError, isSourceLocale, isTargetLocale, SOURCE_LOCALES, TARGET_LOCALES, VersionError, type DubError, type Job } from '@dub/core';

const notFor = (field: string, locale: string, role: 'source' | 'target') =>
  `${field}: "${locale}" is not supported for its role (${role}): not a ${role} locale of the contract (${(role === 'source' ? SOURCE_LOCALES : TARGET_LOCALES).join(', ')})`;

/** The error a job's locales earn on arrival, or undefined when they are contract locales for their roles. */
export function jobLocaleError(job: Job): DubError | undefined {
  switch (job.type) {
    case 'prepare-asset': {
      if (!isSourceLocale(job.locale)) return new AssetError('invalid_input', notFor('locale', job.locale, 'source'), { details: { field: 'locale' } });
      const i = job.versions.findIndex((v) => !isTargetLocale(v.locale));
      if (i >= 0) return new AssetError('invalid_input', notFor(`versions[${i}].locale`, job.versions[i]!.locale, 'target'), { details: { field: `versions[${i}].locale` } });
      return undefined;
    }
    case 'prepare-version':
      if (!isSourceLocale(job.source_locale)) return new VersionError('unsupported_language_pair', notFor('source_locale', job.source_locale, 'source'), { details: { field: 'source_locale' } });
      if (!isTargetLocale(job.version.locale)) return new VersionError('unsupported_language_pair', notFor('version.locale', job.version.locale, 'target'), { details: { field: 'version.locale' } });
      return undefined;
    case 'generate-version':
      if (!isTargetLocale(job.locale)) return new VersionError('unsupported_language_pair', notFor('locale', job.locale, 'target'), { details: { field: 'locale' } });
      return undefined;
  }
}
