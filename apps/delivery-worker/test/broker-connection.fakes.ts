// Unit-test support for the worker's broker specs: outside src, so no fake stands among the code that ships.
/**
 * A broker connection with no broker behind it: it only remembers how it ended. It has BrokerConnection's
 * shape without importing it, so this folder and src do not import each other.
 */
export class FakeBrokerConnection {
  usable = true;
  closed = false;
  destroyed = false;

  close(): Promise<void> {
    this.closed = true;
    this.usable = false;
    return Promise.resolve();
  }

  destroy(): void {
    this.destroyed = true;
    this.usable = false;
  }
}
