/** `s3://BUCKET[/PREFIX]` locations (kept apart from the S3 client, which loads only when used). */
import { ValidationError } from '@dub/core';

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing slash ("" for the bucket's root). */
  prefix: string;
}

/** Parse `s3://BUCKET[/PREFIX]` (bucket names as S3 allows them: 3-63 of a-z 0-9 . -). */
export function parseS3Url(raw: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
  if (!m) throw new ValidationError(`--blobs ${raw}: an S3 location is s3://BUCKET or s3://BUCKET/PREFIX (bucket: 3-63 characters of a-z, 0-9, '.', '-')`, { field: 'blobs' });
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix && !prefix.split('/').every((s) => /^[A-Za-z0-9._=-]+$/.test(s))) throw new ValidationError(`--blobs ${raw}: the prefix may hold only A-Z a-z 0-9 . _ = - and /`, { field: 'blobs' });
  return { bucket: m[1]!, prefix };
}
