// web-tree-sitter's typings name two types of the DOM lib, which this package does not load: Emscripten's module
// options (`Parser.init`, called here without any) and `WebAssembly.Module` (`Language.loadSync`, not used). Empty
// declarations stand for them; they merge with the DOM lib's where a program has it.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
interface EmscriptenModule {}
declare namespace WebAssembly {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface Module {}
}
