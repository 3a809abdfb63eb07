// web-tree-sitter's typings name Emscripten's module type, which @types/emscripten declares only against the DOM lib;
// `Parser.init()` is called here without options, so an empty interface stands for it.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
interface EmscriptenModule {}
