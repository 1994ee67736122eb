// Package modeldir says where scripts/fetch-model.sh puts the built-in
// embedding models when neither a directory argument nor
// VAULTASK_MODELS__BUILTIN_DIR names one, for the models' packages
// (llm/uselite, llm/e5, llm/bge) and llm.
//
// It imports nothing from this module.
package modeldir
