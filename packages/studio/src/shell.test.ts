import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bootJson, renderStudioShell } from './shell.js';
import type { StudioBoot } from './types.js';

const template = fs.readFileSync(new URL('./index.html', import.meta.url), 'utf8');
const boot = (over: Partial<StudioBoot> = {}): StudioBoot => ({ v: 1, api_base: 'http://127.0.0.1:8080', version_id: 'ver_1', access: 'link', ...over });

describe('renderStudioShell', () => {
  it('fills title, asset base, message and boot data of the real shell', () => {
    const html = renderStudioShell(template, { title: 'Talk <1>', assetBase: 'http://h/studio-assets/abc/', message: 'Loading "x"', boot: boot() });
    expect(html).not.toMatch(/%DUB_[A-Z]+%/);
    expect(html).toContain('<title>Talk &lt;1&gt;</title>');
    expect(html).toContain('<link rel="stylesheet" href="http://h/studio-assets/abc/studio.css">');
    expect(html).toContain('<script type="module" src="http://h/studio-assets/abc/main.js"></script>');
    expect(html).toContain('Loading &quot;x&quot;');
    const json = /<script type="application\/json" id="dub-studio-boot">([^<]*)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(json)).toEqual(boot());
  });

  it('boot data cannot close the script element or open a comment, and read back unchanged', () => {
    const nasty = boot({ error: { status: 403, detail: '</script><script>alert(1)</script><!-- & \u2028' } });
    const json = bootJson(nasty);
    expect(json).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(json)).toEqual(nasty);
    const html = renderStudioShell(template, { title: 't', assetBase: '/a/', message: 'm', boot: nasty });
    expect(html.match(/<\/script>/g)).toHaveLength(2);
  });

  it('refuses a template without its placeholders (a broken build)', () => {
    expect(() => renderStudioShell('<html></html>', { title: 't', assetBase: '/', message: 'm', boot: boot() })).toThrow(/lacks %DUB_TITLE%/);
  });

  it('a placeholder-like text in the values is not expanded', () => {
    const html = renderStudioShell(template, { title: '%DUB_BOOT%', assetBase: '/a/', message: '%DUB_ASSETS%', boot: boot() });
    expect(html).toContain('<title>%DUB_BOOT%</title>');
    expect(html).toContain('<p id="boot-message">%DUB_ASSETS%</p>');
  });
});
