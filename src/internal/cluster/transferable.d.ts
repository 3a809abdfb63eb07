// @effect/rpc's typings name the DOM's `Transferable`, which the ES2022 + Node libs of this package do not declare.
declare global {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Transferable {}
}

export {}
