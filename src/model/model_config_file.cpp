// load_model_config: TOML/JSON model files (catalog.hpp). Being written in this session; the
// definition lands in the next commit.
