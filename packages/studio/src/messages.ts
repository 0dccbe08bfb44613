/** Small DOM and message helpers shared by the studio's panels. */
import { ApiError } from './api-client.js';

export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.status ? `${e.detail} (HTTP ${e.status})` : e.detail;
  return e instanceof Error ? e.message : String(e);
}

/** Set a text only when it differs (no needless layout). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}
