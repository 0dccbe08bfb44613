/** A tiny element builder for the page (no framework). */

type Child = Node | string | number | null | undefined | false;
type AttrValue = string | number | boolean | null | undefined;
type Listeners = Partial<Record<keyof HTMLElementEventMap, (e: Event) => void>>;
export type Attrs = { [name: string]: AttrValue | Listeners; on?: Listeners };

/**
 * `h('button', { type: 'button', disabled: true, on: { click } }, 'Save')`. Boolean attributes are
 * set when true and left out when false; `value` is set as the property (form controls).
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'on' || v === undefined || v === null || v === false) continue;
    if (typeof v === 'object') continue;
    if (k === 'value') (el as unknown as { value: string }).value = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const [type, fn] of Object.entries(attrs.on ?? {})) if (fn) el.addEventListener(type, fn);
  append(el, ...children);
  return el;
}

export function append(el: Element, ...children: Child[]): void {
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
}

/** Replace an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from the page`);
  return el as T;
}
