# One place for warning flags (STYLE 4.1). -Werror only when ATTNSCOPE_WERROR is on (CI turns it on).
function(attnscope_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wno-unused-parameter)
  if(ATTNSCOPE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
