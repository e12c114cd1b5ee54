// The source of the precompiled-header targets (cmake/BuildSpeed.cmake): the
// header is the product, this file only gives CMake something to compile.
