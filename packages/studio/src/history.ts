/**
 * Undo and redo of the edits made since the script was loaded or saved. Each entry is a snapshot
 * of the segments before an edit. Typing into one field is one entry, not one per key: an edit
 * with the same `group` as the one just before it (the same field, nothing else in between) adds
 * no entry.
 */
export class EditHistory<T> {
  private undoStack: T[] = [];
  private redoStack: T[] = [];
  private lastGroup: string | undefined;

  constructor(private readonly limit = 500) {}

  /** Call before an edit with the state it starts from (a function: called only when an entry is added). */
  record(before: T | (() => T), group?: string): void {
    this.redoStack = [];
    if (group !== undefined && group === this.lastGroup) return;
    this.undoStack.push(typeof before === 'function' ? (before as () => T)() : before);
    if (this.undoStack.length > this.limit) this.undoStack.shift();
    this.lastGroup = group;
  }

  /** The next edit starts a new entry even with the same group (focus moved, a save, an undo). */
  cut(): void {
    this.lastGroup = undefined;
  }

  /** The state to go back to, given the current one (which redo then restores); undefined when there is none. */
  undo(current: T): T | undefined {
    return this.move(this.undoStack, this.redoStack, current);
  }

  redo(current: T): T | undefined {
    return this.move(this.redoStack, this.undoStack, current);
  }

  /** Takes the state on top of `from`, keeping `current` on `to` to come back to. */
  private move(from: T[], to: T[], current: T): T | undefined {
    const state = from.pop();
    if (state === undefined) return undefined;
    to.push(current);
    this.lastGroup = undefined;
    return state;
  }

  get canUndo(): boolean {
    return this.undoStack.length > 0;
  }

  get canRedo(): boolean {
    return this.redoStack.length > 0;
  }

  clear(): void {
    this.undoStack = [];
    this.redoStack = [];
    this.lastGroup = undefined;
  }
}
